import Foundation
import PushgateAPNs
import PushgateConfig
import PushgateCore
import PushgateSandbox
import ServiceLifecycleTestKit
import Synchronization
import Testing

/// The provider against the emulator, over real TLS and HTTP/2.
@Suite("APNs provider against the emulator")
struct APNsProviderEmulatorTests {
    static let alert = PushNotification(
        kind: .alert,
        priority: .high,
        payload: .object(["aps": .object(["alert": .string("Hello"), "badge": .number(3)]), "room_id": .string("!r:example.org")]),
        timeToLive: 3600,
        collapseID: "room-1"
    )

    @Test func alertIsDeliveredWithAPNsHeadersAndTheBody() async throws {
        try await EmulatorHarness.withEmulator { harness in
            try await harness.withProvider { provider in
                let before = Int64(Date().timeIntervalSince1970)
                let outcome = await provider.deliver(Self.alert, to: deviceToken(), deadline: .soon)
                #expect(outcome == .delivered)

                let deliveries = harness.emulator.log.all
                #expect(deliveries.count == 1)
                let delivery = try #require(deliveries.first)
                #expect(delivery.provider == "apns")
                #expect(delivery.token == deviceToken())
                #expect(delivery.status == 200)
                #expect(delivery.reason == nil)
                #expect(delivery.headers["http-version"] == "2")
                #expect(delivery.headers["apns-topic"] == "im.pushgate.test")
                #expect(delivery.headers["apns-push-type"] == "alert")
                #expect(delivery.headers["apns-priority"] == "10")
                #expect(delivery.headers["apns-collapse-id"] == "room-1")
                #expect(UUID(uuidString: delivery.headers["apns-id"] ?? "") != nil)
                let expiration = try #require(delivery.headers["apns-expiration"].flatMap { Int64($0) })
                #expect(expiration >= before + 3600 && expiration <= before + 3600 + 5)
                let body = try JSONDecoder().decode(JSONValue.self, from: Data(delivery.body.utf8))
                #expect(body == Self.alert.payload)
            }
        }
    }

    @Test func backgroundGetsPriorityFiveAndNormalAlertsToo() async throws {
        try await EmulatorHarness.withEmulator { harness in
            try await harness.withProvider { provider in
                let background = PushNotification(kind: .background, priority: .high, payload: .object(["aps": .object(["content-available": .number(1)])]))
                #expect(await provider.deliver(background, to: deviceToken(), deadline: .soon) == .delivered)
                var normal = Self.alert
                normal.priority = .normal
                normal.timeToLive = nil
                normal.collapseID = nil
                #expect(await provider.deliver(normal, to: deviceToken(), deadline: .soon) == .delivered)

                let deliveries = harness.emulator.log.all
                #expect(deliveries.map(\.status) == [200, 200])
                #expect(deliveries.map { $0.headers["apns-push-type"] } == ["background", "alert"])
                #expect(deliveries.map { $0.headers["apns-priority"] } == ["5", "5"])
                #expect(deliveries[1].headers["apns-expiration"] == nil)
                #expect(deliveries[1].headers["apns-collapse-id"] == nil)
            }
        }
    }

    @Test func voipGoesToTheVoIPTopic() async throws {
        try await EmulatorHarness.withEmulator { harness in
            try await harness.withProvider { provider in
                let call = PushNotification(kind: .voip, priority: .high, payload: .object(["aps": .object([:]), "call_id": .string("c1")]))
                #expect(await provider.deliver(call, to: deviceToken(), deadline: .soon) == .delivered)
                let delivery = try #require(harness.emulator.log.all.first)
                #expect(delivery.headers["apns-topic"] == "im.pushgate.test.voip")
                #expect(delivery.headers["apns-push-type"] == "voip")
                #expect(delivery.headers["apns-priority"] == "10")
            }
        }
    }

    @Test func specialTokensGiveTheirOutcomes() async throws {
        try await EmulatorHarness.withEmulator { harness in
            try await harness.withProvider { provider in
                let cases: [(String, DeliveryOutcome)] = [
                    ("dead", .invalidToken(reason: "Unregistered")),
                    ("bad0", .invalidToken(reason: "BadDeviceToken")),
                    ("4290", .retryLater(after: nil, reason: "TooManyRequests")),
                    ("5000", .retryLater(after: nil, reason: "InternalServerError")),
                    ("5030", .retryLater(after: nil, reason: "ServiceUnavailable")),
                ]
                for (prefix, expected) in cases {
                    let outcome = await provider.deliver(Self.alert, to: deviceToken(prefix), deadline: .soon)
                    #expect(outcome == expected, "token prefix \(prefix)")
                }
                // A malformed token never reaches the URL; a well-formed one of the wrong length is
                // refused by the emulator.
                #expect(await provider.deliver(Self.alert, to: "abc/../x", deadline: .soon) == .invalidToken(reason: "BadDeviceToken"))
                #expect(await provider.deliver(Self.alert, to: "abcdef", deadline: .soon) == .invalidToken(reason: "BadDeviceToken"))
                let log = harness.emulator.log.all
                #expect(log.map(\.status) == [410, 400, 429, 500, 503, 400])
                #expect(log.map(\.reason) == ["Unregistered", "BadDeviceToken", "TooManyRequests", "InternalServerError", "ServiceUnavailable", "BadDeviceToken"])
            }
        }
    }

    @Test func oversizePayloadIsRejectedWithoutReachingTheEmulator() async throws {
        try await EmulatorHarness.withEmulator { harness in
            try await harness.withProvider { provider in
                let big = String(repeating: "x", count: 4100)
                let alert = PushNotification(payload: .object(["aps": .object(["alert": .string(big)])]))
                let outcome = await provider.deliver(alert, to: deviceToken(), deadline: .soon)
                guard case .rejected(let reason) = outcome else {
                    Issue.record("expected rejected, got \(outcome)")
                    return
                }
                #expect(reason.contains("PayloadTooLarge"))
                // The same body fits the VoIP limit.
                let call = PushNotification(kind: .voip, payload: alert.payload)
                #expect(await provider.deliver(call, to: deviceToken(), deadline: .soon) == .delivered)
                #expect(harness.emulator.log.all.map(\.headers["apns-push-type"]) == ["voip"])
            }
        }
    }

    /// The connection's HTTP/2 handler does not validate header blocks: values a front end chose that HTTP/2
    /// cannot carry are refused before sending (a clear rejection, not a transport error retried for a day),
    /// and the emulator, which validates what it receives, sees only the valid request.
    @Test func headerValuesHTTP2CannotCarryAreRejectedBeforeSending() async throws {
        try await EmulatorHarness.withEmulator { harness in
            try await harness.withProvider { provider in
                let payload: JSONValue = .object(["aps": .object(["alert": .string("hi")])])
                var collapse = PushNotification(payload: payload, collapseID: "room\r\napns-priority: 10")
                var topic = PushNotification(payload: payload)
                topic.apnsTopic = harness.emulator.bundleID + ".voip\n"
                var padded = PushNotification(payload: payload, collapseID: " room")
                for notification in [collapse, topic, padded] {
                    let outcome = await provider.deliver(notification, to: deviceToken(), deadline: .soon)
                    guard case .rejected(let reason) = outcome else {
                        Issue.record("expected rejected, got \(outcome)")
                        continue
                    }
                    #expect(reason.contains("not a valid HTTP/2 header value"))
                }
                collapse.collapseID = "room-1"
                topic.apnsTopic = harness.emulator.bundleID
                padded.collapseID = "room 1"
                for notification in [collapse, topic, padded] {
                    #expect(await provider.deliver(notification, to: deviceToken(), deadline: .soon) == .delivered)
                }
                #expect(harness.emulator.log.all.map(\.headers["apns-collapse-id"]) == ["room-1", nil, "room 1"])
            }
        }
    }

    /// Two apps with one key, and an app's next back end after a reload, send one provider token between
    /// them: APNs refuses a key's token updated more than once in 20 minutes (gorush#512).
    @Test func appsSharingAKeyShareOneProviderToken() async throws {
        try await EmulatorHarness.withEmulator { harness in
            let registry = APNsProviderTokenRegistry()
            let settings = try harness.settings([:])
            let first = try APNsProvider(configuration: APNsConfiguration(settings: settings), logger: TestLogging.quiet, tokens: registry)
            let second = try APNsProvider(configuration: APNsConfiguration(settings: settings), logger: TestLogging.quiet, tokens: registry)
            let rebuilt = try APNsProvider(configuration: APNsConfiguration(settings: settings), logger: TestLogging.quiet, tokens: registry)
            let alone = try APNsProvider(configuration: APNsConfiguration(settings: settings), logger: TestLogging.quiet)
            #expect(first.providerToken === second.providerToken && second.providerToken === rebuilt.providerToken)
            try await testGracefulShutdown { trigger in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for provider in [first, second, rebuilt] { group.addTask { try await provider.run() } }
                    for round in 0..<3 {
                        for provider in [first, second, rebuilt] {
                            #expect(await provider.deliver(Self.alert, to: deviceToken(String(format: "%04x", round)), deadline: .soon) == .delivered)
                        }
                    }
                    #expect(harness.emulator.distinctProviderTokens == 1)
                    #expect(first.providerToken?.issuedCount == 1)
                    group.addTask { try await alone.run() }
                    #expect(await alone.deliver(Self.alert, to: deviceToken(), deadline: .soon) == .delivered)
                    #expect(harness.emulator.distinctProviderTokens == 2)
                    trigger.triggerGracefulShutdown()
                    try await group.waitForAll()
                }
            }
        }
    }

    /// Over three hours of simulated time, with a notification a minute through each of two apps sharing a
    /// key, the emulator (whose clock is the same simulated one) sees a new provider token every 50
    /// minutes: never two within 20 minutes (APNs's `TooManyProviderTokenUpdates`), never one older than
    /// an hour (`ExpiredProviderToken`).
    @Test func providerTokensAreRenewedEveryFiftyMinutesOverSimulatedTime() async throws {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let elapsed = Mutex<TimeInterval>(0)
        let now: @Sendable () -> Date = { start.addingTimeInterval(elapsed.withLock { $0 }) }
        try await EmulatorHarness.withEmulator(now: now) { harness in
            let registry = APNsProviderTokenRegistry(now: now)
            let settings = try harness.settings([:])
            let first = try APNsProvider(configuration: APNsConfiguration(settings: settings), logger: TestLogging.quiet, tokens: registry)
            let second = try APNsProvider(configuration: APNsConfiguration(settings: settings), logger: TestLogging.quiet, tokens: registry)
            try await testGracefulShutdown { trigger in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for provider in [first, second] { group.addTask { try await provider.run() } }
                    for minute in 0..<180 {
                        elapsed.withLock { $0 = TimeInterval(minute * 60) }
                        for provider in [first, second] {
                            let outcome = await provider.deliver(Self.alert, to: deviceToken(), deadline: .soon)
                            #expect(outcome == .delivered, "minute \(minute): \(outcome)")
                        }
                    }
                    trigger.triggerGracefulShutdown()
                    try await group.waitForAll()
                }
            }
            let firstSeen = harness.emulator.providerTokensFirstSeen.map { $0.timeIntervalSince(start) / 60 }
            #expect(firstSeen == [0, 50, 100, 150])
            #expect(zip(firstSeen, firstSeen.dropFirst()).allSatisfy { (20...60).contains($1 - $0) })
            #expect(first.providerToken?.issuedCount == 4)
        }
    }

    @Test func providerTokenIsReusedAndRenewedAfterExpiredProviderToken() async throws {
        try await EmulatorHarness.withEmulator { harness in
            try await harness.withProvider { provider in
                let token = try #require(provider.providerToken)
                #expect(await provider.deliver(Self.alert, to: deviceToken(), deadline: .soon) == .delivered)
                #expect(await provider.deliver(Self.alert, to: deviceToken(), deadline: .soon) == .delivered)
                #expect(token.issuedCount == 1)

                // The emulator expires the provider token; the provider renews it and retries once.
                #expect(await provider.deliver(Self.alert, to: deviceToken("e0e0"), deadline: .soon) == .delivered)
                #expect(token.issuedCount == 2)
                #expect(await provider.deliver(Self.alert, to: deviceToken(), deadline: .soon) == .delivered)
                #expect(token.issuedCount == 2)

                let log = harness.emulator.log.all
                #expect(log.map(\.status) == [200, 200, 403, 200, 200])
                #expect(log[2].reason == "ExpiredProviderToken")
                #expect(log[2].headers["apns-id"] != log[3].headers["apns-id"])
            }
        }
    }

    @Test func expiredDeadlineGivesRetryLaterFast() async throws {
        try await EmulatorHarness.withEmulator { harness in
            try await harness.withProvider { provider in
                let clock = ContinuousClock()
                let started = clock.now
                let outcome = await provider.deliver(Self.alert, to: deviceToken(), deadline: started - .seconds(1))
                guard case .retryLater(let after, _) = outcome else {
                    Issue.record("expected retryLater, got \(outcome)")
                    return
                }
                #expect(after == nil)
                // Nothing was sent (the emulator saw nothing); the bound only guards against a hang.
                #expect(clock.now - started < .seconds(60))
                #expect(harness.emulator.log.all.isEmpty)
            }
        }
    }

    @Test func unreachableServerGivesRetryLater() async throws {
        let directory = try TemporaryDirectory()
        let emulator = try APNsEmulator(bundleID: "im.pushgate.test")
        let settings = try appSettings([
            "keyfile": try directory.write("k.p8", emulator.privateKeyPEM),
            "key_id": emulator.keyID, "team_id": emulator.teamID, "topic": "im.pushgate.test",
            "base_url": "https://127.0.0.1:1",
        ])
        let provider = try APNsProvider(configuration: APNsConfiguration(settings: settings), logger: TestLogging.quiet)
        let outcome = await provider.deliver(Self.alert, to: deviceToken(), deadline: ContinuousClock.now + .seconds(2))
        guard case .retryLater(nil, _) = outcome else {
            Issue.record("expected retryLater, got \(outcome)")
            try await provider.shutdown()
            return
        }
        try await provider.shutdown()
    }

    @Test func descriptionNamesTheAppButNoSecrets() async throws {
        try await EmulatorHarness.withEmulator { harness in
            try await harness.withProvider { provider in
                #expect(provider.description.contains("im.pushgate.test"))
                #expect(!provider.description.contains("PRIVATE KEY"))
                #expect(!provider.description.contains(harness.emulator.teamID))
            }
        }
    }
}
