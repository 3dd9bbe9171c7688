import Foundation
import PushgateCore
@testable import PushgateFCM
import PushgateSandbox
import Testing

/// The provider against the emulator, over real sockets.
@Suite("FCM provider deliveries")
struct FCMProviderDeliveryTests {
    /// The app has `fcm_options` (``EmulatedFCM``): they are the Matrix front end's to merge, so the back
    /// end sends the message as stated, without them.
    @Test func aDeliveryArrivesWithTheTokenAndStatedAndroidFieldsAndNoAppOptions() async throws {
        try await EmulatedFCM.run { fcm async throws in
            var notification = PushNotification.sample(priority: .normal, timeToLive: 60, collapseID: "room-1")
            notification.payload = .object([
                "data": .object(["event_id": .string("$event"), "unread": .string("2")]),
                "android": .object(["notification": .object(["tag": .string("room")])]),
            ])
            #expect(await fcm.deliver(notification, to: "device-token-1") == .delivered)

            let delivery = try #require(fcm.emulator.log.all.last)
            #expect(delivery.provider == "fcm")
            #expect(delivery.token == "device-token-1")
            #expect(delivery.status == 200)
            #expect(delivery.reason == nil)
            #expect(delivery.headers["content-type"] == "application/json; charset=UTF-8")
            #expect(delivery.headers["user-agent"] == "pushgate")
            #expect(delivery.headers["authorization"] != nil)

            let message = try jsonObject(delivery.body)
            #expect(message["token"] as? String == "device-token-1")
            #expect(message["data"] as? [String: String] == ["event_id": "$event", "unread": "2"])
            let android = try #require(message["android"] as? [String: Any])
            #expect(android["priority"] as? String == "NORMAL")
            #expect(android["ttl"] as? String == "60s")
            #expect(android["collapse_key"] as? String == "room-1")
            #expect(android["notification"] as? [String: String] == ["tag": "room"])
            #expect(message["apns"] == nil)
            #expect(Set(message.keys) == ["token", "data", "android"])
        }
    }

    @Test func thePayloadWinsOverDerivedAndroidFields() async throws {
        try await EmulatedFCM.run { fcm async throws in
            var notification = PushNotification.sample(priority: .normal, timeToLive: 60)
            notification.payload = .object([
                "android": .object(["priority": .string("HIGH"), "ttl": .string("5s"), "notification": .object(["channel_id": .string("calls")])]),
            ])
            #expect(await fcm.deliver(notification, to: "device-token-2") == .delivered)
            let message = try jsonObject(try #require(fcm.emulator.log.all.last).body)
            let android = try #require(message["android"] as? [String: Any])
            #expect(android["priority"] as? String == "HIGH")
            #expect(android["ttl"] as? String == "5s")
            #expect(android["collapse_key"] == nil)
            #expect(android["notification"] as? [String: String] == ["channel_id": "calls"])
        }
    }

    @Test func eachSpecialTokenGivesItsOutcome() async throws {
        try await EmulatedFCM.run { fcm async throws in
            let sample = PushNotification.sample()
            #expect(await fcm.deliver(sample, to: "unregistered-1") == .invalidToken(reason: "UNREGISTERED"))
            guard case .invalidToken(let reason) = await fcm.deliver(sample, to: "badtoken-1") else {
                Issue.record("an invalid registration token must be reported as invalidToken")
                return
            }
            #expect(reason.contains("not a valid FCM registration token"))
            #expect(await fcm.deliver(sample, to: "mismatch-1") == .invalidToken(reason: "SENDER_ID_MISMATCH"))
            #expect(await fcm.deliver(sample, to: "quota-1") == .retryLater(after: .seconds(7), reason: "QUOTA_EXCEEDED"))
            guard case .retryLater(nil, let unavailable) = await fcm.deliver(sample, to: "unavailable-1") else {
                Issue.record("503 must be retried later")
                return
            }
            #expect(unavailable.contains("UNAVAILABLE"))
            #expect(await fcm.deliver(sample, to: "internal-1") == .retryLater(after: nil, reason: "INTERNAL"))

            let statuses = fcm.emulator.log.all.map { "\($0.token) \($0.status) \($0.reason ?? "-")" }
            #expect(statuses == [
                "unregistered-1 404 UNREGISTERED", "badtoken-1 400 INVALID_ARGUMENT", "mismatch-1 403 SENDER_ID_MISMATCH", "quota-1 429 QUOTA_EXCEEDED",
                "unavailable-1 503 UNAVAILABLE", "internal-1 500 INTERNAL",
            ])
        }
    }

    @Test func anInvalidMessageIsRejectedNotTheToken() async throws {
        try await EmulatedFCM.run { fcm async throws in
            // FCM refuses non-string data values; the message is at fault, not the device.
            let notification = PushNotification(payload: .object(["data": .object(["unread": .number(2)])]))
            guard case .rejected(let reason) = await fcm.deliver(notification, to: "device-token-3") else {
                Issue.record("a malformed message must be rejected")
                return
            }
            #expect(reason.contains("INVALID_ARGUMENT"))
            #expect(fcm.emulator.log.all.last?.status == 400)
            // A payload that is not an object never leaves the gateway.
            let before = fcm.emulator.sendRequestCount
            #expect(await fcm.deliver(PushNotification(payload: .string("x")), to: "device-token-3") == .rejected(reason: "the payload is not an FCM message object"))
            #expect(fcm.emulator.sendRequestCount == before)
        }
    }

    @Test func aWrongProjectIsRefusedCredentials() async throws {
        try await EmulatedFCM.run(projectID: "someone-else") { fcm async throws in
            guard case .credentialsRefused(let reason) = await fcm.deliver(.sample(), to: "device-token-4") else {
                Issue.record("403 PERMISSION_DENIED is the project's credentials, not the device's")
                return
            }
            #expect(reason.contains("403"))
        }
    }

    @Test func theAccessTokenIsFetchedOnceAndReused() async throws {
        try await EmulatedFCM.run { fcm async throws in
            let outcomes = await withTaskGroup(of: DeliveryOutcome.self) { group in
                for index in 0..<25 {
                    group.addTask { await fcm.deliver(.sample(), to: "device-\(index)") }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            #expect(outcomes.count == 25)
            #expect(outcomes.allSatisfy { $0 == .delivered })
            #expect(fcm.emulator.tokenRequestCount == 1)
            #expect(fcm.emulator.sendRequestCount == 25)
            #expect(Set(fcm.emulator.log.all.map(\.token)).count == 25)
        }
    }

    @Test func a401RefreshesTheAccessTokenOnce() async throws {
        try await EmulatedFCM.run { fcm async throws in
            #expect(await fcm.deliver(.sample(), to: "device-a") == .delivered)
            #expect(fcm.emulator.tokenRequestCount == 1)
            fcm.emulator.revokeAccessTokens()
            #expect(await fcm.deliver(.sample(), to: "device-b") == .delivered)
            #expect(fcm.emulator.tokenRequestCount == 2)
            #expect(fcm.emulator.log.all.map(\.status) == [200, 401, 200])
            #expect(fcm.emulator.log.all.map(\.reason) == [nil, "UNAUTHENTICATED", nil])
            #expect(await fcm.deliver(.sample(), to: "device-c") == .delivered)
            #expect(fcm.emulator.tokenRequestCount == 2)
        }
    }

    @Test func aRefreshedTokenThatIsRefusedAgainIsACredentialsRefusal() async throws {
        try await EmulatedFCM.run { fcm async throws in
            fcm.emulator.refusesAllAccessTokens = true
            guard case .credentialsRefused(let reason) = await fcm.deliver(.sample(), to: "device-d") else {
                Issue.record("a second 401 is the credentials', got \(fcm.emulator.log.all.map(\.status))")
                return
            }
            #expect(reason.contains("UNAUTHENTICATED"))
            #expect(fcm.emulator.tokenRequestCount == 2)
            #expect(fcm.emulator.log.all.map(\.status) == [401, 401])
        }
    }

    /// FCM refusing the APNs credentials stored in the project (401 `THIRD_PARTY_AUTH_ERROR`) rejects that
    /// notification: the access token is kept (no new token request, no second send), and the app's
    /// credentials are not taken for refused, so its Android deliveries go on.
    @Test func aThirdPartyAuthErrorRejectsTheNotificationAndKeepsTheAccessToken() async throws {
        try await EmulatedFCM.run { fcm async throws in
            guard case .rejected(let reason) = await fcm.deliver(.sample(), to: "thirdparty-ios") else {
                Issue.record("THIRD_PARTY_AUTH_ERROR must reject the notification, got \(fcm.emulator.log.all.map(\.status))")
                return
            }
            #expect(reason.contains("THIRD_PARTY_AUTH_ERROR"))
            #expect(fcm.emulator.log.all.map(\.status) == [401])
            #expect(await fcm.deliver(.sample(), to: "device-android") == .delivered)
            #expect(fcm.emulator.tokenRequestCount == 1)
        }
    }

    @Test func deliveriesBeyondTheInflightLimitAreRetriedLater() async throws {
        try await EmulatedFCM.run(extraConfiguration: ["max_connections: 1", "inflight_request_limit: 2"]) { fcm async throws in
            // One slow delivery holds the only connection, a second waits for it, a third is turned away.
            // (The emulator holds `slow` tokens 8 s; the first two get deadlines with room for a loaded machine.)
            // Each is given a head start that a busy machine's scheduling delays fit in (the first also
            // fetches the access token before it holds the connection).
            async let first = fcm.deliver(.sample(), to: "slow-1", within: 30)
            try await Task.sleep(for: .seconds(2))
            async let second = fcm.deliver(.sample(), to: "device-waits", within: 30)
            try await Task.sleep(for: .seconds(1))
            let third = await fcm.deliver(.sample(), to: "device-turned-away")
            #expect(third == .retryLater(after: nil, reason: "inflight_request_limit (2) reached"))
            #expect(fcm.emulator.sendRequestCount == 0)
            #expect(await first == .delivered)
            #expect(await second == .delivered)
            #expect(fcm.emulator.log.all.map(\.token) == ["slow-1", "device-waits"])
        }
    }

    @Test func aDeliveryWaitingForAConnectionGivesUpAtItsDeadline() async throws {
        try await EmulatedFCM.run(extraConfiguration: ["max_connections: 1"]) { fcm async throws in
            async let first = fcm.deliver(.sample(), to: "slow-2", within: 30)
            try await Task.sleep(for: .seconds(2))
            let clock = ContinuousClock()
            let start = clock.now
            let waiting = await fcm.provider.deliver(.sample(), to: "device-impatient", deadline: .now + .milliseconds(300))
            #expect(waiting == .retryLater(after: nil, reason: "deadline passed while waiting for a connection (max_connections 1)"))
            // Below the 10 s the first delivery takes, with room for a loaded machine.
            #expect(start.duration(to: clock.now) < .seconds(9))
            #expect(await first == .delivered)
            #expect(fcm.emulator.log.all.map(\.token) == ["slow-2"])
        }
    }

    @Test func anExpiredDeadlineGivesRetryLaterQuickly() async throws {
        try await EmulatedFCM.run { fcm async throws in
            let clock = ContinuousClock()
            let start = clock.now
            let outcome = await fcm.provider.deliver(.sample(), to: "slow-device", deadline: .now + .milliseconds(400))
            let elapsed = start.duration(to: clock.now)
            guard case .retryLater(nil, let reason) = outcome else {
                Issue.record("a request past its deadline must be retried later, got \(outcome)")
                return
            }
            #expect(reason.contains("deadline"))
            // Below the emulator's 10 s answer to `slow` tokens, with room for a loaded machine.
            #expect(elapsed < .seconds(9))

            let sendsBefore = fcm.emulator.sendRequestCount
            let passed = await fcm.provider.deliver(.sample(), to: "device-late", deadline: .now - .seconds(1))
            #expect(passed == .retryLater(after: nil, reason: "deadline passed before sending"))
            #expect(fcm.emulator.sendRequestCount == sendsBefore)
        }
    }

    @Test func theDescriptionNamesTheAppAndNoSecrets() async throws {
        try await EmulatedFCM.run { fcm async throws in
            let description = fcm.provider.description
            #expect(description.contains(testAppID))
            #expect(description.contains("pushgate-sandbox"))
            #expect(!description.contains("PRIVATE KEY"))
            #expect(fcm.provider.platform == .fcm)
            #expect(fcm.provider.appID == testAppID)
        }
    }
}
