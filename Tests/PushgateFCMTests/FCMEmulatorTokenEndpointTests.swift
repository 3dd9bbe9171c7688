import Foundation
import PushgateProviderSupport
@testable import PushgateSandbox
import PushgateTestSupport
import Testing
import _CryptoExtras

/// The emulator's token endpoint refuses assertions Google would refuse.
@Suite("FCM emulator token endpoint")
struct FCMEmulatorTokenEndpointTests {
    static let grant = "urn:ietf:params:oauth:grant-type:jwt-bearer"

    static func assertion(_ emulator: FCMEmulator, key: _RSA.Signing.PrivateKey? = nil, claims: [String: JSONClaim] = [:], baseURL: String = "http://127.0.0.1:9") throws -> String {
        let account = try jsonObjectFromText(emulator.serviceAccountJSON(baseURL: baseURL))
        let signingKey = try key ?? _RSA.Signing.PrivateKey(pemRepresentation: try #require(account["private_key"] as? String))
        let now = Int64(Date().timeIntervalSince1970)
        var all: [String: JSONClaim] = [
            "iss": .string(emulator.clientEmail),
            "scope": "https://www.googleapis.com/auth/firebase.messaging",
            "aud": .string(baseURL + "/token"),
            "iat": .integer(now),
            "exp": .integer(now + 3600),
        ]
        all.merge(claims) { _, new in new }
        return try JSONWebToken.rs256(header: ["kid": emulator.privateKeyID], claims: all, key: signingKey)
    }

    static func jsonObjectFromText(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    static func form(_ assertion: String, grant: String = Self.grant) -> String {
        "grant_type=\(grant.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? grant)&assertion=\(assertion)"
    }

    @Test func aValidAssertionGetsABearerToken() throws {
        let emulator = try FCMEmulator()
        let reply = emulator.tokenReply(form: Self.form(try Self.assertion(emulator)), host: "127.0.0.1:9")
        #expect(reply.status == 200)
        let body = try Self.jsonObjectFromText(reply.body)
        #expect(body["token_type"] as? String == "Bearer")
        #expect(body["expires_in"] as? Int == 3599)
        #expect(emulator.isValidAccessToken(try #require(body["access_token"] as? String)))
    }

    @Test func googlesAudienceIsAcceptedToo() throws {
        let emulator = try FCMEmulator()
        let assertion = try Self.assertion(emulator, claims: ["aud": "https://oauth2.googleapis.com/token"])
        #expect(emulator.tokenReply(form: Self.form(assertion), host: "elsewhere:1").status == 200)
    }

    @Test(arguments: [
        ("aud", JSONClaim.string("https://attacker.example/token"), "aud"),
        ("iss", JSONClaim.string("someone@example.com"), "iss"),
        ("scope", JSONClaim.string("https://www.googleapis.com/auth/cloud-platform"), "scope"),
        ("exp", JSONClaim.integer(Int64(Date().timeIntervalSince1970) + 7200), "one hour"),
    ])
    func badClaimsAreInvalidGrants(claim: String, value: JSONClaim, mentions: String) throws {
        let emulator = try FCMEmulator()
        let reply = emulator.tokenReply(form: Self.form(try Self.assertion(emulator, claims: [claim: value])), host: "127.0.0.1:9")
        #expect(reply.status == 400)
        let body = try Self.jsonObjectFromText(reply.body)
        #expect(body["error"] as? String == "invalid_grant")
        #expect((body["error_description"] as? String)?.contains(mentions) == true)
        #expect(emulator.issuedTokenCount == 0)
    }

    @Test func expiredAssertionsForeignKeysAndTamperingAreRefused() async throws {
        let emulator = try FCMEmulator()
        let past = Int64(Date().timeIntervalSince1970) - 7200
        let expired = try Self.assertion(emulator, claims: ["iat": .integer(past), "exp": .integer(past + 3600)])
        #expect(emulator.tokenReply(form: Self.form(expired), host: "127.0.0.1:9").status == 400)

        // A key of its own, not the emulator's (one per process), generated away from the pool.
        let foreignKey = try await OffPool.run { try _RSA.Signing.PrivateKey(keySize: .bits2048) }
        let foreign = try Self.assertion(emulator, key: foreignKey)
        #expect(emulator.tokenReply(form: Self.form(foreign), host: "127.0.0.1:9").body.contains("Invalid JWT Signature"))

        // Same signature, other claims.
        let parts = try Self.assertion(emulator).split(separator: ".").map(String.init)
        let other = try Self.assertion(emulator, claims: ["scope": "https://www.googleapis.com/auth/firebase.messaging https://www.googleapis.com/auth/cloud-platform"])
            .split(separator: ".").map(String.init)
        let tampered = [parts[0], other[1], parts[2]].joined(separator: ".")
        #expect(emulator.tokenReply(form: Self.form(tampered), host: "127.0.0.1:9").status == 400)

        #expect(emulator.tokenReply(form: Self.form(try Self.assertion(emulator), grant: "client_credentials"), host: nil).body.contains("unsupported_grant_type"))
        #expect(emulator.tokenReply(form: "grant_type=x", host: nil).status == 400)
        #expect(emulator.tokenRequestCount == 5)
        #expect(emulator.issuedTokenCount == 0)
    }

    @Test func sendsWithoutAnIssuedTokenGetUnauthenticated() throws {
        let emulator = try FCMEmulator()
        let body = Data(#"{"message": {"token": "device"}}"#.utf8)
        let reply = emulator.sendReply(project: "pushgate-sandbox", authorization: "Bearer made-up", body: body)
        #expect(reply.status == 401)
        let error = try #require(try Self.jsonObjectFromText(reply.body)["error"] as? [String: Any])
        #expect(error["status"] as? String == "UNAUTHENTICATED")
        #expect(error["code"] as? Int == 401)
        #expect(emulator.log.all.map(\.status) == [401])
        #expect(emulator.log.all.first?.token == "device")
    }

    @Test func errorsHaveGooglesShape() throws {
        let emulator = try FCMEmulator()
        let granted = try Self.jsonObjectFromText(emulator.tokenReply(form: Self.form(try Self.assertion(emulator)), host: "127.0.0.1:9").body)
        let bearer = "Bearer " + (try #require(granted["access_token"] as? String))
        let reply = emulator.sendReply(project: "pushgate-sandbox", authorization: bearer, body: Data(#"{"message": {"token": "unregistered-x"}}"#.utf8))
        #expect(reply.status == 404)
        let error = try #require(try Self.jsonObjectFromText(reply.body)["error"] as? [String: Any])
        #expect(error["status"] as? String == "NOT_FOUND")
        let details = try #require(error["details"] as? [[String: Any]])
        #expect(details.first?["@type"] as? String == "type.googleapis.com/google.firebase.fcm.v1.FcmError")
        #expect(details.first?["errorCode"] as? String == "UNREGISTERED")

        let missing = emulator.sendReply(project: "pushgate-sandbox", authorization: bearer, body: Data(#"{"message": {"data": {"a": "b"}}}"#.utf8))
        #expect(missing.status == 400)
        let ok = emulator.sendReply(project: "pushgate-sandbox", authorization: bearer, body: Data(#"{"message": {"token": "fine", "data": {"a": "b"}}}"#.utf8))
        #expect(ok.status == 200)
        #expect(try Self.jsonObjectFromText(ok.body)["name"] as? String == "projects/pushgate-sandbox/messages/3")
        #expect(ok.body == #"{"name":"projects/pushgate-sandbox/messages/3"}"#)
    }

    @Test func theLogShowsEachMessageWithSortedKeys() throws {
        let emulator = try FCMEmulator(projectID: "a/\"b")
        let granted = try Self.jsonObjectFromText(emulator.tokenReply(form: Self.form(try Self.assertion(emulator)), host: "127.0.0.1:9").body)
        let bearer = "Bearer " + (try #require(granted["access_token"] as? String))
        let ok = emulator.sendReply(project: "a/\"b", authorization: bearer, body: Data(#"{"message": {"token": "fine", "data": {"z": "1", "a": "x/y"}}}"#.utf8))
        #expect(ok.status == 200)
        #expect(ok.body == #"{"name":"projects/a/\"b/messages/1"}"#)
        _ = emulator.sendReply(project: "a/\"b", authorization: bearer, body: Data("not json".utf8))
        #expect(emulator.log.all.map(\.body) == [#"{"data":{"a":"x/y","z":"1"},"token":"fine"}"#, "not json"])
    }
}
