import CoreMetrics
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import PushgateConfig
import PushgateCore
import PushgateDelivery
import PushgateHTTP
@testable import PushgateNextcloud
import PushgateServer
import PushgateStore
import PushgateStoreSQLite
import PushgateTestSupport
import Testing

@Suite("Nextcloud /notifications")
struct NextcloudNotificationRoutesTests {
    static let androidUA = "Mozilla/5.0 (Android) Nextcloud-android/3.30.0"
    static let filesIOSUA = "Mozilla/5.0 (iOS) Nextcloud-iOS/5.5.0"
    static let talkIOSUA = "Mozilla/5.0 (iOS) Nextcloud-Talk v19.0.0 (Strict VoIP)"

    struct Proxy: Sendable {
        let client: any TestClientProtocol
        let store: any PushStore
        let providers: [String: RecordingProvider]

        func register(_ user: NextcloudUser, token: String, userAgent: String) async throws {
            let status = try await NextcloudDeviceRoutesTests.post(self.client, user.form(pushToken: token), userAgent: userAgent)
            #expect(status == .ok)
        }

        func post(_ body: String, contentType: String = "application/x-www-form-urlencoded", headers extra: HTTPFields = [:]) async throws -> (HTTPResponse.Status, String) {
            var headers: HTTPFields = [.contentType: contentType, .userAgent: "Nextcloud-Server-Crawler/33.0.0"]
            headers.append(contentsOf: extra)
            let response = try await self.client.execute(uri: "/notifications", method: .post, headers: headers, body: ByteBuffer(string: body))
            return (response.status, String(buffer: response.body))
        }

        /// Registers each user's Android device with its token and returns a batch entry (a random subject)
        /// for each, in order.
        func androidEntries(_ devices: [(user: NextcloudUser, token: String)]) async throws -> [String] {
            var entries: [String] = []
            for (user, token) in devices {
                try await self.register(user, token: token, userAgent: NextcloudNotificationRoutesTests.androidUA)
                entries.append(NextcloudServerSide.entry(user: user, pushToken: token, ciphertext: NextcloudServerSide.randomCiphertext()))
            }
            return entries
        }

        func received(_ app: String) -> [RecordingProvider.Push] { self.providers[app]?.received ?? [] }
        var totalReceived: Int { self.providers.values.map(\.received.count).reduce(0, +) }
    }

    /// - Parameter worker: whether an outbox worker delivers what the routes queue (retried every 20 ms).
    static func withProxy(
        extraSettings: String = "", bodyLimit: Int = 1 << 20, worker: Bool = false, _ body: @Sendable (Proxy) async throws -> Void
    ) async throws {
        let settings = try GatewayConfiguration(yaml: """
            nextcloud:
              fcm_app: files.android
              apns_app: files.ios
              routes:
                - {user_agent: '\\(iOS\\) Nextcloud-Talk', app: talk.ios, voip_app: talk.ios.voip}
              max_batch_size: 50
            \(extraSettings)
            """).nextcloud
        let providers = [
            RecordingProvider(appID: "files.android", platform: .fcm), RecordingProvider(appID: "files.ios", platform: .apns),
            RecordingProvider(appID: "talk.ios", platform: .apns), RecordingProvider(appID: "talk.ios.voip", platform: .apns),
        ]
        let directory = try TemporaryDirectory()
        let store = try await SQLiteStore.open(path: directory.path("store.sqlite"), logger: NextcloudDeviceRoutesTests.quiet)
        let wakeUp = OutboxWakeUp()
        let metrics = DeliveryMetrics(factory: NOOPMetricsHandler.instance)
        let dispatcher = Dispatcher(
            directory: ProviderDirectory(providers), store: store, metrics: metrics, wakeUp: wakeUp, logger: NextcloudDeviceRoutesTests.quiet
        )
        let devices = NextcloudDeviceRoutes(
            store: store, router: NextcloudAppRouter(settings: settings), pathPrefix: "", identityProof: NextcloudIdentityProof(settings: .init()),
            logger: NextcloudDeviceRoutesTests.quiet
        )
        let notifications = NextcloudNotificationRoutes(store: store, dispatcher: dispatcher, settings: settings, logger: NextcloudDeviceRoutesTests.quiet)
        let router = GatewayRouterBuilder.build(routes: devices.routes + notifications.routes, metrics: GatewayMetrics(), maxRequestBodySize: bodyLimit)
        var app = Application(router: router, logger: NextcloudDeviceRoutesTests.quiet)
        app.addServices(store)
        if worker {
            var configuration = OutboxWorker.Configuration()
            configuration.retry = RetryPolicy(initialDelay: .milliseconds(10), maximumDelay: .milliseconds(20), maximumAge: .seconds(60))
            configuration.pollInterval = .milliseconds(20)
            app.addServices(
                OutboxWorker(
                    dispatcher: dispatcher, store: store, metrics: metrics, wakeUp: wakeUp, configuration: configuration,
                    logger: NextcloudDeviceRoutesTests.quiet
                )
            )
        }
        try await app.test(.router) { client in
            try await body(Proxy(client: client, store: store, providers: Dictionary(uniqueKeysWithValues: providers.map { ($0.appID, $0) })))
        }
    }

    static func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    static func secrets(_ payload: JSONValue) -> (String?, String?) {
        guard case .object(let object) = payload else { return (nil, nil) }
        var subject: String?
        var signature: String?
        if case .string(let value)? = object["subject"] { subject = value }
        if case .string(let value)? = object["signature"] { signature = value }
        return (subject, signature)
    }

    @Test func eachEntryReachesItsPlatformAsItsDevicesExpect() async throws {
        let android = try await NextcloudUser(cloudID: "ann@cloud.example.com", tokenID: 1)
        let filesIOS = try await NextcloudUser(cloudID: "ben@cloud.example.com", tokenID: 2)
        let talkIOS = try await NextcloudUser(cloudID: "cat@cloud.example.com", tokenID: 3)
        let talkMac = try await NextcloudUser(cloudID: "dan@cloud.example.com", tokenID: 4)
        let androidToken = "fGx1:APA91bH/token+with=odd_chars"
        let filesToken = String(repeating: "ab", count: 32)
        let talkPair = String(repeating: "cd", count: 32) + " " + String(repeating: "ef", count: 32)
        let macToken = String(repeating: "12", count: 32)
        try await Self.withProxy { proxy in
            try await proxy.register(android, token: androidToken, userAgent: Self.androidUA)
            try await proxy.register(filesIOS, token: filesToken, userAgent: Self.filesIOSUA)
            try await proxy.register(talkIOS, token: talkPair, userAgent: Self.talkIOSUA)
            try await proxy.register(talkMac, token: macToken, userAgent: Self.talkIOSUA)
            let subjects = (0..<5).map { _ in NextcloudServerSide.randomCiphertext() }
            let entries = [
                NextcloudServerSide.entry(user: android, pushToken: androidToken, ciphertext: subjects[0], priority: "high", type: "alert"),
                NextcloudServerSide.entry(user: filesIOS, pushToken: filesToken, ciphertext: subjects[1]),
                NextcloudServerSide.entry(user: filesIOS, pushToken: filesToken, ciphertext: subjects[2], type: "background"),
                NextcloudServerSide.entry(user: talkIOS, pushToken: talkPair, ciphertext: subjects[3], priority: "high", type: "voip"),
                NextcloudServerSide.entry(user: talkMac, pushToken: macToken, ciphertext: subjects[4], priority: "high", type: "voip"),
            ]
            let (status, body) = try await proxy.post(NextcloudServerSide.form(entries))
            #expect(status == .ok)
            let answer = try Self.json(body)
            #expect(answer["failed"] as? Int == 0)
            #expect((answer["unknown"] as? [Any])?.isEmpty == true)
            #expect(body.contains("\"failed\":0"))

            let fcm = try #require(proxy.received("files.android").first)
            #expect(fcm.token == androidToken)
            #expect(fcm.notification.priority == .high)
            #expect(fcm.notification.payload == ["data": ["subject": .string(subjects[0].base64EncodedString()), "signature": .string(NextcloudServerSide.sign(subjects[0], with: android.key))]])

            let files = proxy.received("files.ios")
            #expect(files.count == 2)
            let alert = try #require(files.first { $0.notification.kind == .alert })
            #expect(alert.token == filesToken)
            #expect(alert.notification.priority == .normal)
            guard case .object(let alertBody) = alert.notification.payload, case .object(let aps)? = alertBody["aps"] else {
                Issue.record("the alert has no aps")
                return
            }
            #expect(aps["mutable-content"] == 1)
            #expect(aps["alert"] != nil)
            #expect(aps["sound"] == "default", "heard, as the apps' notification extensions keep the payload's sound")
            #expect(alert.notification.timeToLive == nil)
            #expect(Self.secrets(alert.notification.payload).0 == subjects[1].base64EncodedString())
            let background = try #require(files.first { $0.notification.kind == .background })
            #expect(background.notification.priority == .normal)
            guard case .object(let backgroundBody) = background.notification.payload else { return }
            #expect(backgroundBody["aps"] == ["content-available": 1])
            #expect(Self.secrets(background.notification.payload).0 == subjects[2].base64EncodedString())

            let voip = try #require(proxy.received("talk.ios.voip").first)
            #expect(voip.token == String(repeating: "ef", count: 32))
            #expect(voip.notification.kind == .voip)
            #expect(Self.secrets(voip.notification.payload).0 == subjects[3].base64EncodedString())
            #expect(Self.secrets(voip.notification.payload).1 == NextcloudServerSide.sign(subjects[3], with: talkIOS.key))
            // A call lives a minute at the provider: a phone back online later does not ring for it.
            #expect(voip.notification.timeToLive == NextcloudPushBuilder.callLifetime && NextcloudPushBuilder.callLifetime <= 60)

            // Talk on a Mac has no PushKit token: the call arrives as a high-priority alert.
            let mac = try #require(proxy.received("talk.ios").first)
            #expect(mac.token == macToken)
            #expect(mac.notification.kind == .alert)
            #expect(mac.notification.priority == .high)
            #expect(mac.notification.timeToLive == NextcloudPushBuilder.callLifetime)
            #expect(proxy.received("talk.ios").count == 1)
        }
    }

    @Test func entriesThatFailTheirChecksAreCountedAndNotSent() async throws {
        let user = try await NextcloudUser(cloudID: "eve@cloud.example.com", tokenID: 5)
        let stranger = try await NextcloudUser(cloudID: "zed@cloud.example.com", tokenID: 6)
        let token = "fcm:registered"
        try await Self.withProxy { proxy in
            try await proxy.register(user, token: token, userAgent: Self.androidUA)
            let subject = NextcloudServerSide.randomCiphertext()
            let entries = [
                NextcloudServerSide.entry(user: user, pushToken: token, ciphertext: subject),
                NextcloudServerSide.entry(user: stranger, pushToken: token, ciphertext: subject),  // never registered
                NextcloudServerSide.entry(user: user, pushToken: "fcm:another", ciphertext: subject),  // stale token hash
                NextcloudServerSide.entry(user: user, pushToken: token, ciphertext: subject, signature: NextcloudServerSide.sign(subject, with: stranger.key)),
                NextcloudServerSide.entry(user: user, pushToken: token, ciphertext: NextcloudServerSide.randomCiphertext(), signature: NextcloudServerSide.sign(subject, with: user.key)),
                "{\"deviceIdentifier\":",
                #"{"deviceIdentifier":"x","pushTokenHash":"y","subject":"z","signature":"s","priority":"urgent"}"#,
            ]
            let (status, body) = try await proxy.post(NextcloudServerSide.form(entries))
            #expect(status == .ok)
            let answer = try Self.json(body)
            #expect(answer["failed"] as? Int == 5)
            #expect(answer["unknown"] as? [String] == [stranger.deviceIdentifier])
            #expect(proxy.totalReceived == 1)
            #expect(try await proxy.store.device(namespace: "nextcloud", deviceID: user.deviceIdentifier) != nil)
        }
    }

    /// A token the provider calls gone (`dead`: Unregistered) removes its device, listed in `unknown`,
    /// which is how the server learns to forget it. A token it calls another app's (`cafe`:
    /// `DeviceTokenNotForTopic`, a wrong topic, or a wrong VoIP topic for a Talk pair's PushKit half) is
    /// what a misconfigured app meets for every device: the entry counts as failed and the device stays,
    /// so its server does not delete it. A Talk iOS pair is stored whole, so its PushKit half decides.
    @Test(arguments: [("dead", true), ("cafe", false)])
    func aRefusedTokenRemovesItsDeviceOnlyWhenItIsGone(prefix: String, gone: Bool) async throws {
        let user = try await NextcloudUser(cloudID: "\(prefix)-files@cloud.example.com", tokenID: gone ? 7 : 12)
        let talk = try await NextcloudUser(cloudID: "\(prefix)-talk@cloud.example.com", tokenID: gone ? 8 : 13)
        let token = prefix + ":token"
        let pair = String(repeating: "cd", count: 32) + " " + prefix + String(repeating: "0", count: 60)
        try await Self.withProxy { proxy in
            try await proxy.register(user, token: token, userAgent: Self.androidUA)
            try await proxy.register(talk, token: pair, userAgent: Self.talkIOSUA)
            let entries = [
                NextcloudServerSide.entry(user: user, pushToken: token, ciphertext: NextcloudServerSide.randomCiphertext()),
                NextcloudServerSide.entry(user: talk, pushToken: pair, ciphertext: NextcloudServerSide.randomCiphertext(), priority: "high", type: "voip"),
            ]
            let (status, body) = try await proxy.post(NextcloudServerSide.form(entries))
            #expect(status == .ok)
            let answer = try Self.json(body)
            #expect(proxy.received("talk.ios.voip").count == 1)
            for device in [user, talk] {
                #expect((try await proxy.store.device(namespace: "nextcloud", deviceID: device.deviceIdentifier) == nil) == gone)
            }
            guard gone else {
                #expect(answer["failed"] as? Int == 2, "\(body)")
                #expect((answer["unknown"] as? [Any])?.isEmpty == true)
                return
            }
            #expect(answer["failed"] as? Int == 0)
            #expect(Set(answer["unknown"] as? [String] ?? []) == [user.deviceIdentifier, talk.deviceIdentifier])
            // The server deletes them; if it pushes again anyway, they stay unknown and nothing is sent.
            let again = try await proxy.post(NextcloudServerSide.form([entries[0]]))
            #expect(try Self.json(again.1)["unknown"] as? [String] == [user.deviceIdentifier])
            #expect(proxy.totalReceived == 2)
        }
    }

    @Test func whatAProviderCannotTakeNowWaitsInTheOutbox() async throws {
        let busy = try await NextcloudUser(cloudID: "hal@cloud.example.com", tokenID: 9)
        let refused = try await NextcloudUser(cloudID: "ida@cloud.example.com", tokenID: 10)
        try await Self.withProxy { proxy in
            let entries = try await proxy.androidEntries([(busy, "busy:token"), (refused, "nope:token")])
            let (status, body) = try await proxy.post(NextcloudServerSide.form(entries))
            #expect(status == .ok)
            let answer = try Self.json(body)
            #expect(answer["failed"] as? Int == 1)
            #expect((answer["unknown"] as? [Any])?.isEmpty == true)
            #expect(try await proxy.store.pendingCount() == 1)
            let queued = try await proxy.store.claimDue(now: Date().addingTimeInterval(60), limit: 10, leaseFor: .seconds(10), owner: "test")
            #expect(queued.flatMap(\.message.pushTokens) == ["busy:token"])
            #expect(queued.first?.message.appID == "files.android")
        }
    }

    /// A call the provider cannot take now is counted as failed, not queued: the outbox would ring the
    /// phone after the call had ended.
    @Test func aCallTheProviderCannotTakeNowIsNotQueued() async throws {
        let caller = try await NextcloudUser(cloudID: "jay@cloud.example.com", tokenID: 11)
        try await Self.withProxy { proxy in
            try await proxy.register(caller, token: "busy:call", userAgent: Self.androidUA)
            let entry = NextcloudServerSide.entry(
                user: caller, pushToken: "busy:call", ciphertext: NextcloudServerSide.randomCiphertext(), priority: "high", type: "voip"
            )
            let (status, body) = try await proxy.post(NextcloudServerSide.form([entry]))
            #expect(status == .ok)
            let answer = try Self.json(body)
            #expect(answer["failed"] as? Int == 1)
            #expect((answer["unknown"] as? [Any])?.isEmpty == true)
            #expect(try await proxy.store.pendingCount() == 0)
            #expect(proxy.received("files.android").first?.notification.timeToLive == NextcloudPushBuilder.callLifetime)
        }
    }

    @Test func theRetriesOfOneBatchAreQueuedTogether() async throws {
        var users: [NextcloudUser] = []
        for index in 0..<10 { users.append(try await NextcloudUser(cloudID: "u\(index)@cloud.example.com", tokenID: 100 + index)) }
        try await Self.withProxy { [users] proxy in
            let entries = try await proxy.androidEntries(users.enumerated().map { index, user in (user, "busy:\(index)") })
            let before = Date()
            let (status, body) = try await proxy.post(NextcloudServerSide.form(entries))
            #expect(status == .ok)
            #expect(try Self.json(body)["failed"] as? Int == 0)
            let queued = try await proxy.store.claimDue(now: Date().addingTimeInterval(60), limit: 20, leaseFor: .seconds(10), owner: "test")
            #expect(Set(queued.flatMap(\.message.pushTokens)) == Set((0..<10).map { "busy:\($0)" }))
            // One write: one time for all of them (the provider's 30 s pause from one clock reading), and
            // the consecutive ids of one INSERT.
            #expect(Set(queued.map(\.message.notBefore)).count == 1)
            if let notBefore = queued.first?.message.notBefore {
                #expect(notBefore >= before.addingTimeInterval(29) && notBefore <= Date().addingTimeInterval(31))
            }
            let ids = queued.map(\.id).sorted()
            #expect(ids.last.map { $0 - ids[0] } == Int64(ids.count - 1))
        }
    }

    @Test func aRetriedEntryReachesItsDeviceLaterWithTheSameNotification() async throws {
        let user = try await NextcloudUser(cloudID: "kim@cloud.example.com", tokenID: 21)
        let other = try await NextcloudUser(cloudID: "lee@cloud.example.com", tokenID: 22)
        try await Self.withProxy(worker: true) { proxy in
            let entries = try await proxy.androidEntries([(user, "once:kim"), (other, "fcm:lee")])
            let (status, body) = try await proxy.post(NextcloudServerSide.form(entries))
            #expect(status == .ok)
            #expect(try Self.json(body)["failed"] as? Int == 0)
            // The first attempt was answered "later": the outbox's worker tries again and the device gets it.
            let deadline = ContinuousClock.now + .seconds(60)
            while proxy.received("files.android").count < 3, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
            let kim = proxy.received("files.android").filter { $0.token == "once:kim" }
            #expect(kim.count == 2)
            // What the device gets the second time is what the first attempt carried: the same alert, the
            // same encrypted subject and signature, the same push type and priority.
            #expect(kim.first?.notification == kim.last?.notification)
            #expect(proxy.received("files.android").filter { $0.token == "fcm:lee" }.count == 1)
            // Removed from the outbox once delivered (just after the provider's answer).
            while try await proxy.store.pendingCount() > 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
            #expect(try await proxy.store.pendingCount() == 0)
        }
    }

    @Test func unreadableAndOversizeBatchesAreRefusedWithoutSendingAnything() async throws {
        let user = try await NextcloudUser(cloudID: "joe@cloud.example.com", tokenID: 11)
        // A general body limit under the route's own, so that the route's (max_batch_size × 4 KiB) holds.
        try await Self.withProxy(bodyLimit: 16 * 1024) { proxy in
            let entry = try await proxy.androidEntries([(user, "fcm:joe")])[0]
            for body in ["", "hello=world", "notifications=%7B%7D"] {
                let (status, text) = try await proxy.post(body)
                #expect(status == .badRequest, "body \(body)")
                #expect(!text.contains("unknown"))
            }
            #expect(try await proxy.post("{\"notifications\": 3}", contentType: "application/json").0 == .badRequest)
            // Over the body limit (max_batch_size 50, 4 KiB an entry): refused whole, before it is read.
            let oversize = NextcloudServerSide.form(Array(repeating: entry, count: 200))
            #expect(oversize.utf8.count > 50 * 4096)
            #expect(try await proxy.post(oversize).0 == .contentTooLarge)
            #expect(proxy.totalReceived == 0)
            // The documented JSON form is read too.
            let (status, text) = try await proxy.post("{\"notifications\": [\(entry)]}", contentType: "application/json")
            #expect(status == .ok)
            #expect(try Self.json(text)["failed"] as? Int == 0)
            #expect(proxy.totalReceived == 1)
        }
    }

    /// More entries than `max_batch_size` (50 here) in a body within its limit: every one is handled, as
    /// Nextcloud's server never sends a refused batch again.
    @Test func aBatchOfMoreEntriesThanMaxBatchSizeWithinTheBodyLimitIsHandledWhole() async throws {
        let user = try await NextcloudUser(cloudID: "max@cloud.example.com", tokenID: 14)
        try await Self.withProxy { proxy in
            let entry = try await proxy.androidEntries([(user, "fcm:max")])[0]
            let batch = NextcloudServerSide.form(Array(repeating: entry, count: 60))
            let (status, body) = try await proxy.post(batch)
            #expect(status == .ok)
            #expect(try Self.json(body)["failed"] as? Int == 0)
            #expect(proxy.totalReceived == 60)
        }
    }

    @Test func aBatchMayBeLargerThanTheGatewaysGeneralBodyLimit() async throws {
        let user = try await NextcloudUser(cloudID: "lea@cloud.example.com", tokenID: 13)
        try await Self.withProxy(bodyLimit: 16 * 1024) { proxy in
            let entry = try await proxy.androidEntries([(user, "fcm:lea")])[0]
            let batch = NextcloudServerSide.form(Array(repeating: entry, count: 40))
            #expect(batch.utf8.count > 16 * 1024)
            let (status, body) = try await proxy.post(batch)
            #expect(status == .ok)
            #expect(try Self.json(body)["failed"] as? Int == 0)
            #expect(proxy.totalReceived == 40)
            // Other routes keep the general limit.
            let devices = try await proxy.client.execute(
                uri: "/devices", method: .post, headers: [.contentType: "application/x-www-form-urlencoded"],
                body: ByteBuffer(repeating: UInt8(ascii: "a"), count: 20 * 1024)
            )
            #expect(devices.status == .contentTooLarge)
        }
    }

    @Test func aServerOverItsFairUseLimitGets429WithoutCounts() async throws {
        let user = try await NextcloudUser(cloudID: "kim@cloud.example.com", tokenID: 12)
        let limit = """
              rate_limit: {notifications: 3, window: 3600}
            """
        try await Self.withProxy(extraSettings: limit) { proxy in
            let entry = try await proxy.androidEntries([(user, "fcm:kim")])[0]
            #expect(try await proxy.post(NextcloudServerSide.form([entry, entry])).0 == .ok)
            let (status, body) = try await proxy.post(NextcloudServerSide.form([entry, entry]))
            #expect(status == .tooManyRequests)
            #expect(!body.contains("failed") && !body.contains("unknown"))
            #expect(proxy.totalReceived == 2)
            // The refused batch used none of the allowance: one entry still fits, then none.
            #expect(try await proxy.post(NextcloudServerSide.form([entry])).0 == .ok)
            #expect(try await proxy.post(NextcloudServerSide.form([entry])).0 == .tooManyRequests)
            #expect(proxy.totalReceived == 3)
            // A server that identifies itself with a subscription key has its own budget.
            let keyed: HTTPFields = [.init("X-Nextcloud-Subscription-Key")!: "ABCDE-FGHIJ-KLMNO-PQRST-UVWXY"]
            #expect(try await proxy.post(NextcloudServerSide.form([entry, entry, entry]), headers: keyed).0 == .ok)
            #expect(try await proxy.post(NextcloudServerSide.form([entry]), headers: keyed).0 == .tooManyRequests)
            #expect(proxy.totalReceived == 6)
        }
    }

    /// Behind a proxy the sender is the address the proxy appended (the last entry), not one the client
    /// wrote before it: naming another server there neither spends its allowance nor escapes one's own.
    @Test func behindAProxyTheAddressTheProxyAddedIsCounted() async throws {
        let user = try await NextcloudUser(cloudID: "lee@cloud.example.com", tokenID: 13)
        let limit = """
              rate_limit: {notifications: 3, window: 3600, x_forwarded_for: true}
            """
        try await Self.withProxy(extraSettings: limit) { proxy in
            let entry = try await proxy.androidEntries([(user, "fcm:lee")])[0]
            func from(_ chain: String) -> HTTPFields { [.init("X-Forwarded-For")!: chain] }
            // An attacker at 203.0.113.9 names the victim 198.51.100.7 first, with junk and then with
            // entries, changing the first address each time.
            #expect(try await proxy.post(NextcloudServerSide.form(["x", "y", "z"]), headers: from("198.51.100.7, 203.0.113.9")).0 == .ok)
            #expect(try await proxy.post(NextcloudServerSide.form([entry]), headers: from("192.0.2.1, 203.0.113.9")).0 == .tooManyRequests)
            // The victim's own batch, through the same proxy.
            #expect(try await proxy.post(NextcloudServerSide.form([entry, entry]), headers: from("198.51.100.7")).0 == .ok)
            #expect(proxy.totalReceived == 2)
        }
    }
}
