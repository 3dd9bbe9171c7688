import _CryptoExtras
import Crypto
import Foundation
import PushgateCore
import PushgateProviderSupport
import PushgateTestSupport
import Testing

@Suite("Provider support")
struct JSONWebTokenTests {
    @Test func es256TokensVerifyWithThePublicKey() throws {
        let key = P256.Signing.PrivateKey()
        let token = try JSONWebToken.es256(header: ["kid": "ABC123"], claims: ["iss": "TEAM123", "iat": 1_700_000_000], key: key)
        let parts = token.split(separator: ".").map(String.init)
        #expect(parts.count == 3)
        let header = try JSONSerialization.jsonObject(with: Data(try #require(Base64URL.decode(parts[0])))) as? [String: String]
        #expect(header == ["alg": "ES256", "kid": "ABC123", "typ": "JWT"])
        let claims = try JSONSerialization.jsonObject(with: Data(try #require(Base64URL.decode(parts[1])))) as? [String: Any]
        #expect(claims?["iss"] as? String == "TEAM123")
        #expect(claims?["iat"] as? Int == 1_700_000_000)
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: try #require(Base64URL.decode(parts[2])))
        #expect(key.publicKey.isValidSignature(signature, for: Data((parts[0] + "." + parts[1]).utf8)))
    }

    @Test func rs256TokensVerifyWithThePublicKey() async throws {
        let key = try await OffPool.run { try _RSA.Signing.PrivateKey(keySize: .bits2048) }
        let token = try JSONWebToken.rs256(claims: ["iss": "sa@example.iam.gserviceaccount.com"], key: key)
        let parts = token.split(separator: ".").map(String.init)
        let signature = _RSA.Signing.RSASignature(rawRepresentation: try #require(Base64URL.decode(parts[2])))
        #expect(key.publicKey.isValidSignature(signature, for: Data((parts[0] + "." + parts[1]).utf8), padding: .insecurePKCS1v1_5))
    }

    @Test func base64URLRoundTripsWithoutPadding() {
        let bytes: [UInt8] = [0xfb, 0xff, 0xfe, 0x00, 0x3e]
        let text = Base64URL.encode(bytes)
        #expect(!text.contains("=") && !text.contains("+") && !text.contains("/"))
        #expect(Base64URL.decode(text) == bytes)
        #expect(Base64URL.decode("not base64!") == nil)
    }

    @Test func retryAfterReadsSecondsAndDates() {
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        #expect(RetryAfter.parse("120") == .seconds(120))
        #expect(RetryAfter.parse(nil) == nil)
        #expect(RetryAfter.parse("soon") == nil)
        #expect(RetryAfter.parse("Tue, 14 Nov 2023 22:13:50 GMT", now: now) == .seconds(30))
        #expect(RetryAfter.parse("Tue, 14 Nov 2023 22:13:00 GMT", now: now) == .seconds(0))
        // A leap day and a new year, against the seconds Python's email.utils.parsedate_to_datetime gives.
        #expect(RetryAfter.parse("Thu, 29 Feb 2024 23:59:59 GMT", now: Date(timeIntervalSince1970: 1_709_251_199)) == .seconds(0))
        #expect(RetryAfter.parse("Mon, 01 Jan 2024 00:00:10 GMT", now: Date(timeIntervalSince1970: 1_704_067_200)) == .seconds(10))
        for malformed in ["Tue, 14 Nov 2023 22:13:50 UTC", "Tue 14 Nov 2023 22:13:50 GMT", "Tue, 14 Foo 2023 22:13:50 GMT", "Tue, 32 Nov 2023 22:13:50 GMT", "Tue, 14 Nov 2023 24:13:50 GMT"] {
            #expect(RetryAfter.parse(malformed, now: now) == nil, "\(malformed)")
        }
    }

    /// A server may ask for any delay; beyond a day it counts as a day, so that the dates and millisecond
    /// counts made from it cannot overflow (a 19-digit figure trapped the process).
    @Test func retryAfterIsAtMostADay() {
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        #expect(RetryAfter.parse("86400") == .seconds(86_400))
        #expect(RetryAfter.parse("86401") == RetryAfter.maximum)
        #expect(RetryAfter.parse("10000000000000000") == RetryAfter.maximum)
        #expect(RetryAfter.parse("99999999999999999999999999") == RetryAfter.maximum)
        #expect(RetryAfter.parse("Fri, 31 Dec 9999 23:59:59 GMT", now: now) == RetryAfter.maximum)
        #expect(RetryAfter.parse("-5") == nil)
        let far = now.addingTimeInterval(RetryAfter.maximum.timeInterval)
        #expect(far.millisecondsSince1970 == 1_700_086_400_000)
    }

    @Test func millisecondConversionsSaturate() {
        #expect(Duration.seconds(Int64.max).wholeMilliseconds == .max)
        #expect(Duration.seconds(Int64.min).wholeMilliseconds == .min)
        #expect(Date(timeIntervalSince1970: 1e300).millisecondsSince1970 == .max)
        #expect(Date(timeIntervalSince1970: -1e300).millisecondsSince1970 == .min)
    }
}

@Suite("Outbound proxy")
struct OutboundProxyTests {
    @Test func proxyURLsAreReadAsSygnalReadsThem() {
        let full = OutboundProxy(url: "http://user:p%40ss@proxy.example:3128")
        #expect(full?.host == "proxy.example")
        #expect(full?.port == 3128)
        #expect(full?.credentials?.username == "user")
        #expect(full?.credentials?.password == "p@ss")
        #expect(full?.description == "proxy.example:3128")
        // Port 80 by default; a user name without a password is ignored.
        let bare = OutboundProxy(url: "http://someone@proxy.example")
        #expect(bare?.port == 80)
        #expect(bare?.credentials == nil)
        #expect(OutboundProxy(url: "socks5://proxy:1080") == nil)
        #expect(OutboundProxy(url: "not a url") == nil)
        #expect(OutboundProxy.fromEnvironment(["HTTPS_PROXY": "http://p:8080"])?.port == 8080)
        #expect(OutboundProxy.fromEnvironment([:]) == nil)
    }
}
