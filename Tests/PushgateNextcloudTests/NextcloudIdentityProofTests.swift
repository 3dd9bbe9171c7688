import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import PushgateConfig
@testable import PushgateNextcloud
import PushgateProviderSupport
import PushgateStore
import Synchronization
import Testing

@Suite("Nextcloud cloudId identity proof")
struct NextcloudIdentityProofTests {
    /// A Nextcloud server's public identity-proof endpoint, publishing one user's key, counting requests.
    static func withKeyServer(user: String, publishing key: String, _ body: @Sendable (Int, @Sendable () -> Int) async throws -> Void) async throws {
        try await Self.withKeyServer(PublishedKeys([user: key]), body)
    }

    /// The keys a test's Nextcloud server publishes, by user id; a test may change them.
    final class PublishedKeys: Sendable {
        private let keys: Mutex<[String: String]>
        init(_ keys: [String: String]) { self.keys = Mutex(keys) }
        subscript(user: String) -> String? {
            get { self.keys.withLock { $0[user] } }
            set { self.keys.withLock { $0[user] = newValue } }
        }
    }

    static func withKeyServer(_ published: PublishedKeys, _ body: @Sendable (Int, @Sendable () -> Int) async throws -> Void) async throws {
        let requests = Mutex(0)
        let router = Router()
        router.get("/ocs/v2.php/identityproof/key/:user") { request, context -> Response in
            requests.withLock { $0 += 1 }
            guard let user = context.parameters.get("user"), let key = published[user], request.uri.queryParameters["format"] == "json" else {
                return Response(status: .notFound, body: .init(byteBuffer: ByteBuffer(string: "[\"User not found\"]")))
            }
            let object: [String: Any] = ["ocs": ["meta": ["status": "ok", "statuscode": 200], "data": ["public": key]]]
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: object))))
        }
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)), logger: NextcloudDeviceRoutesTests.quiet)
        try await app.test(.live) { client in
            let port = try #require(client.port)
            try await body(port, { requests.withLock { $0 } })
        }
    }

    static let loopbackAllowed: NextcloudSettings.IdentityProof = {
        var settings = NextcloudSettings.IdentityProof()
        settings.httpHosts = ["127.0.0.1:*"]
        settings.allowedHosts = ["127.0.0.1"]
        settings.timeout = .seconds(60)  // a safety net for a loaded machine, not what is tested
        return settings
    }()

    @Test func aNewKeyTakesOverWhenTheUsersOwnServerPublishesIt() async throws {
        let first = try await NextcloudUser(cloudID: "dave@cloud.example.com", tokenID: 1)
        let second = try await NextcloudUser(cloudID: "dave@cloud.example.com", tokenID: 1)
        let published = PublishedKeys(["dave": first.publicKey])
        try await Self.withKeyServer(published) { port, requests in
            try await NextcloudDeviceRoutesTests.withProxy(identityProof: Self.loopbackAllowed) { client, store async throws in
                let proof = ["cloudId": "dave@http://127.0.0.1:\(port)"]
                // Registered with a cloudId whose server publishes the key: the row is bound to it.
                #expect(try await NextcloudDeviceRoutesTests.post(client, first.form(pushToken: "first:token", extra: proof)) == .ok)
                #expect(requests() == 1)
                // The user's key changes on their server; the new key takes the identifier over.
                published["dave"] = second.publicKey
                #expect(try await NextcloudDeviceRoutesTests.post(client, second.form(pushToken: "second:token")) == .conflict)
                #expect(try await NextcloudDeviceRoutesTests.post(client, second.form(pushToken: "second:token", extra: proof)) == .ok)
                let stored = try #require(try await store.device(namespace: "nextcloud", deviceID: first.deviceIdentifier))
                #expect(stored.publicKey == second.publicKey)
                #expect(stored.pushToken == "second:token")
                // The old key cannot take it back: its owner's server no longer publishes it.
                #expect(try await NextcloudDeviceRoutesTests.post(client, first.form(pushToken: "first:token", extra: proof)) == .conflict)
                #expect(try await store.device(namespace: "nextcloud", deviceID: first.deviceIdentifier)?.pushToken == "second:token")
                #expect(requests() == 3)
            }
        }
    }

    /// Anyone can run a Nextcloud server that publishes a key of their own for a user of their own; that
    /// proves nothing about an identifier registered by someone else.
    @Test func aProofForAnotherCloudIDCannotTakeOverAnIdentifier() async throws {
        let victim = try await NextcloudUser(cloudID: "frank@cloud.example.com", tokenID: 3)
        let attacker = try await NextcloudUser(cloudID: "frank@cloud.example.com", tokenID: 3)  // the victim's identifier, the attacker's key
        let published = PublishedKeys(["frank": victim.publicKey, "mallory": attacker.publicKey])
        try await Self.withKeyServer(published) { port, requests in
            try await NextcloudDeviceRoutesTests.withProxy(identityProof: Self.loopbackAllowed) { client, store async throws in
                // Registered without a cloudId (as every official client does), and with one.
                #expect(try await NextcloudDeviceRoutesTests.post(client, victim.form(pushToken: "victim:token")) == .ok)
                let bound = try await NextcloudUser(cloudID: "frank@cloud.example.com", tokenID: 4)
                published["frank"] = bound.publicKey
                #expect(try await NextcloudDeviceRoutesTests.post(client, bound.form(pushToken: "bound:token", extra: ["cloudId": "frank@http://127.0.0.1:\(port)"])) == .ok)
                let forged = NextcloudUser(cloudID: "frank@cloud.example.com", tokenID: 4, key: attacker)
                for (target, form) in [(victim, attacker.form(pushToken: "attacker:token", extra: ["cloudId": "mallory@http://127.0.0.1:\(port)"])),
                                       (bound, forged.form(pushToken: "attacker:token", extra: ["cloudId": "mallory@http://127.0.0.1:\(port)"]))] {
                    #expect(try await NextcloudDeviceRoutesTests.post(client, form) == .conflict)
                    let stored = try #require(try await store.device(namespace: "nextcloud", deviceID: target.deviceIdentifier))
                    #expect(stored.publicKey == target.publicKey && stored.pushToken != "attacker:token")
                }
                #expect(requests() == 1, "only the bound registration's own proof")
            }
        }
    }

    @Test func aProofFromAnotherUserOrAForbiddenAddressChangesNothing() async throws {
        let first = try await NextcloudUser(cloudID: "erin@cloud.example.com", tokenID: 2)
        let second = try await NextcloudUser(cloudID: "erin@cloud.example.com", tokenID: 2)
        try await Self.withKeyServer(user: "erin", publishing: second.publicKey) { port, requests in
            // Defaults: https only and no loopback addresses, so nothing is even asked.
            try await NextcloudDeviceRoutesTests.withProxy { client, store async throws in
                #expect(try await NextcloudDeviceRoutesTests.post(client, first.form(pushToken: "first:token")) == .ok)
                for cloudID in ["erin@http://127.0.0.1:\(port)", "erin@127.0.0.1:\(port)", "erin@localhost:\(port)", "no-server@", "@127.0.0.1"] {
                    let status = try await NextcloudDeviceRoutesTests.post(client, second.form(pushToken: "second:token", extra: ["cloudId": cloudID]))
                    #expect(status == .conflict, "cloudId \(cloudID)")
                }
                #expect(requests() == 0)
                #expect(try await store.device(namespace: "nextcloud", deviceID: first.deviceIdentifier)?.publicKey == first.publicKey)
            }
            // Allowed to ask, but the server knows no such user: the registration stands, bound to no
            // cloudId, so no cloudId can take it over (and none is asked about again).
            try await NextcloudDeviceRoutesTests.withProxy(identityProof: Self.loopbackAllowed) { client, store async throws in
                let mallory = ["cloudId": "mallory@http://127.0.0.1:\(port)"]
                #expect(try await NextcloudDeviceRoutesTests.post(client, first.form(pushToken: "first:token", extra: mallory)) == .ok)
                #expect(requests() == 1)
                let status = try await NextcloudDeviceRoutesTests.post(client, second.form(pushToken: "second:token", extra: mallory))
                #expect(status == .conflict)
                #expect(requests() == 1)
                #expect(try await store.device(namespace: "nextcloud", deviceID: first.deviceIdentifier)?.publicKey == first.publicKey)
            }
        }
    }

    @Test func cloudIDsSplitAtTheLastAtSign() throws {
        let proof = NextcloudIdentityProof(settings: .init())
        #expect(try proof.keyURL(cloudID: "alice@cloud.example.com/nc/").absoluteString == "https://cloud.example.com/nc/ocs/v2.php/identityproof/key/alice?format=json")
        #expect(try proof.keyURL(cloudID: "a.b@mail.example@cloud.example.com").absoluteString == "https://cloud.example.com/ocs/v2.php/identityproof/key/a.b%40mail.example?format=json")
        for bad in ["nobody", "@cloud.example.com", "alice@", "alice@https://"] {
            #expect(throws: NextcloudIdentityProof.Failure.malformedCloudID, "\(bad)") { try proof.keyURL(cloudID: bad) }
        }
    }
}

/// The identity-proof lookup refuses the same addresses as Web Push endpoints, IPv4 carried in IPv6
/// included, before any connection.
@Suite struct NextcloudIdentityProofAddressTests {
    @Test(arguments: ["[::127.0.0.1]", "[64:ff9b::7f00:1]", "[2002:7f00:1::1]", "[::ffff:10.0.0.1]", "198.18.0.1", "192.0.0.8", "240.0.0.1"])
    func specialAndEmbeddedAddressesAreRefused(host: String) async {
        let proof = NextcloudIdentityProof(settings: NextcloudSettings.IdentityProof())
        do {
            _ = try await proof.publicKey(cloudID: "erin@\(host):8443")
            Issue.record("\(host) was contacted")
        } catch {
            guard case .refused(let reason) = error else {
                Issue.record("\(host) gave \(error)")
                return
            }
            #expect(reason.hasPrefix("the host is on a"))
        }
    }
}

/// The lookup connects to the addresses it checked, never to a second lookup's answer (DNS rebinding).
@Suite struct NextcloudIdentityProofPinningTests {
    @Test func theConnectionGoesToTheCheckedAddressNotASecondLookup() async throws {
        let user = try await NextcloudUser(cloudID: "frank@cloud.example.com", tokenID: 7)
        try await NextcloudIdentityProofTests.withKeyServer(user: "frank", publishing: user.publicKey) { port, requests in
            let lookups = Mutex(0)
            // A rebinding name: checked as one address, answering another the next time. `.invalid` never
            // resolves through the system, so a connection can only have used the checked answer.
            let resolver = HostResolver { host in
                let count = lookups.withLock { count -> Int in
                    count += 1
                    return count
                }
                guard host == "rebind.invalid" else { return nil }
                return [IPAddress(literal: count == 1 ? "127.0.0.1" : "127.0.0.2")!]
            }
            var settings = NextcloudSettings.IdentityProof()
            settings.httpHosts = ["rebind.invalid:*"]
            settings.allowedHosts = ["rebind.invalid"]
            settings.timeout = .seconds(60)  // a safety net for a loaded machine, not what is tested
            let proof = NextcloudIdentityProof(settings: settings, resolver: resolver)
            let published = try await proof.publicKey(cloudID: "frank@http://rebind.invalid:\(port)")
            #expect(NextcloudIdentityProof.sameKey(published, user.publicKey))
            #expect(lookups.withLock { $0 } == 1)
            #expect(requests() == 1)
        }
    }

    @Test func aNameThatResolvesToAForbiddenAddressIsNeverContacted() async throws {
        let resolver = HostResolver { _ in [IPAddress(literal: "::ffff:127.0.0.1")!] }
        let proof = NextcloudIdentityProof(settings: NextcloudSettings.IdentityProof(), resolver: resolver)
        do {
            _ = try await proof.publicKey(cloudID: "frank@rebind.example")
            Issue.record("a loopback answer was contacted")
        } catch {
            #expect(error == .refused("the host is on a loopback address"))
        }
    }
}
