import Crypto
import Foundation
import PushgateAPNs
import PushgateProviderSupport
import PushgateSandbox
import Synchronization
import Testing

@Suite("APNs provider token")
struct APNsProviderTokenTests {
    final class FakeClock: Sendable {
        let time = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
        func now() -> Date { self.time.withLock { $0 } }
        func advance(_ seconds: TimeInterval) { self.time.withLock { $0 += seconds } }
    }

    @Test func tokenCarriesKidIssAndIatAndIsRenewedAfterFiftyMinutes() async throws {
        let key = P256.Signing.PrivateKey()
        let clock = FakeClock()
        let source = APNsProviderToken(key: key, keyID: "KEY1234567", teamID: "TEAM123456", now: { clock.now() })
        let verifier = APNsProviderTokenVerifier(publicKey: key.publicKey, keyID: "KEY1234567", teamID: "TEAM123456")

        let first = try source.token()
        #expect(verifier.problem(with: "bearer \(first)", now: clock.now()) == nil)
        let parts = first.split(separator: ".")
        let header = try JSONSerialization.jsonObject(with: Data(try #require(Base64URL.decode(String(parts[0]))))) as? [String: Any]
        let claims = try JSONSerialization.jsonObject(with: Data(try #require(Base64URL.decode(String(parts[1]))))) as? [String: Any]
        #expect(header?["alg"] as? String == "ES256")
        #expect(header?["kid"] as? String == "KEY1234567")
        #expect(claims?["iss"] as? String == "TEAM123456")
        #expect(claims?["iat"] as? Int == 1_800_000_000)

        clock.advance(49 * 60)
        #expect(try source.token() == first)
        clock.advance(60 + 1)
        let second = try source.token()
        #expect(second != first)
        #expect(source.issuedCount == 2)

        // A stale invalidation does not drop the newer token; a current one does.
        source.invalidate(first)
        #expect(try source.token() == second)
        source.invalidate(second)
        #expect(try source.token() != second)
        #expect(source.issuedCount == 3)
    }

    @Test func verifierRefusesForeignOldAndMissingTokens() async throws {
        let key = P256.Signing.PrivateKey()
        let verifier = APNsProviderTokenVerifier(publicKey: key.publicKey, keyID: "K", teamID: "T")
        let now = Date()
        let good = try JSONWebToken.es256(header: ["kid": "K"], claims: ["iss": "T", "iat": .integer(Int64(now.timeIntervalSince1970))], key: key)
        #expect(verifier.problem(with: "bearer \(good)", now: now) == nil)
        #expect(verifier.problem(with: nil, now: now) == "MissingProviderToken")
        #expect(verifier.problem(with: "bearer \(good)", now: now.addingTimeInterval(3601)) == "ExpiredProviderToken")
        let otherKey = try JSONWebToken.es256(header: ["kid": "K"], claims: ["iss": "T", "iat": .integer(Int64(now.timeIntervalSince1970))], key: P256.Signing.PrivateKey())
        #expect(verifier.problem(with: "bearer \(otherKey)", now: now) == "InvalidProviderToken")
        let otherTeam = try JSONWebToken.es256(header: ["kid": "K"], claims: ["iss": "X", "iat": .integer(Int64(now.timeIntervalSince1970))], key: key)
        #expect(verifier.problem(with: "bearer \(otherTeam)", now: now) == "InvalidProviderToken")
    }

    @Test func verifierRemembersTokensButChecksTheirAgeEveryTime() async throws {
        let key = P256.Signing.PrivateKey()
        var verifier = APNsProviderTokenVerifier(publicKey: key.publicKey, keyID: "K", teamID: "T")
        let now = Date()
        let good = try JSONWebToken.es256(header: ["kid": "K"], claims: ["iss": "T", "iat": .integer(Int64(now.timeIntervalSince1970))], key: key)
        let forged = try JSONWebToken.es256(header: ["kid": "K"], claims: ["iss": "T", "iat": .integer(Int64(now.timeIntervalSince1970))], key: P256.Signing.PrivateKey())
        for _ in 0..<3 {
            #expect(verifier.problem(with: "bearer \(good)", now: now) == nil)
            #expect(verifier.problem(with: "bearer \(forged)", now: now) == "InvalidProviderToken")
        }
        // A remembered token still grows old, and one from the future is still refused.
        #expect(verifier.problem(with: "bearer \(good)", now: now.addingTimeInterval(3601)) == "ExpiredProviderToken")
        #expect(verifier.problem(with: "bearer \(good)", now: now.addingTimeInterval(-120)) == "InvalidProviderToken")
        #expect(verifier.problem(with: "bearer \(good)", now: now) == nil)
        // The same token with another scheme, or altered by one character, is checked afresh.
        #expect(verifier.problem(with: "basic \(good)", now: now) == "InvalidProviderToken")
        #expect(verifier.problem(with: "bearer \(good.dropLast())", now: now) == "InvalidProviderToken")
        // What was remembered is for the issued key id, team id and key only.
        verifier.keyID = "OTHER"
        #expect(verifier.problem(with: "bearer \(good)", now: now) == "InvalidProviderToken")
        verifier.keyID = "K"
        #expect(verifier.problem(with: "bearer \(good)", now: now) == nil)
        verifier.publicKey = P256.Signing.PrivateKey().publicKey
        #expect(verifier.problem(with: "bearer \(good)", now: now) == "InvalidProviderToken")
        // Many tokens: the oldest are forgotten, and each is still judged correctly.
        let many = APNsProviderTokenVerifier(publicKey: key.publicKey, keyID: "K", teamID: "T")
        for offset in 0..<300 {
            let token = try JSONWebToken.es256(header: ["kid": "K"], claims: ["iss": "T", "iat": .integer(Int64(now.timeIntervalSince1970) - Int64(offset))], key: key)
            #expect(many.problem(with: "bearer \(token)", now: now) == nil)
        }
        #expect(many.problem(with: "bearer \(good)", now: now) == nil)
    }
}
