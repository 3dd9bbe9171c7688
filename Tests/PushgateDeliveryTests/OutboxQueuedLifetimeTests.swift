import Foundation
import PushgateCore
@testable import PushgateStoreSQLite
@testable import PushgateDelivery
import PushgateTestSupport
import Testing

/// A queued notification's time to live counts from when it was accepted: a retry sends what is left of
/// it, and none is sent once it ran out (0, now or never, not after a failed try).
@Suite("Outbox time to live")
struct OutboxQueuedLifetimeTests {
    @Test(arguments: [
        // (time to live, seconds waited, tried before, what is sent; nil: not sent)
        (60, 0.0, false, 60), (60, 0.9, false, 60), (60, 1.0, false, 59), (60, 59.5, true, 1), (60, 60.0, false, nil),
        (60, 3600.0, true, nil), (60, -5.0, false, 60), (60, Double.infinity, false, nil),
        // 0, now or never: a first try goes out however late, a try after a failed one never.
        (0, 0.2, false, 0), (0, 3600.0, false, 0), (0, 0.0, true, nil),
    ] as [(Int, Double, Bool, Int?)])
    func whatIsLeftOfATimeToLive(timeToLive: Int, waited: Double, tried: Bool, sent: Int?) {
        let notification = PushNotification(payload: .object([:]), timeToLive: timeToLive)
        let left = QueuedLifetime.remaining(of: notification, age: waited, tried: tried)
        #expect(left?.timeToLive == sent)
        if sent == nil { #expect(left == nil) }
    }

    @Test func aNotificationWithoutATimeToLiveGoesUnchanged() {
        let notification = PushNotification(payload: .object([:]), expiration: 1_800_000_000)
        #expect(QueuedLifetime.remaining(of: notification, age: 86_400, tried: true) == notification)
    }

    @Test func aRetryCarriesWhatIsLeftAndAnExpiredOneIsNotSent() async throws {
        let (store, _) = try await DispatcherAndOutboxTests.openStore()
        // Each token's first attempt is answered "retry in 1.5 s"; the retry is delivered.
        let provider = ScriptedProvider(appID: "app", script: [
            "long": [.retryLater(after: .milliseconds(1500), reason: "503"), .delivered],
            "short": [.retryLater(after: .milliseconds(1500), reason: "503"), .delivered],
            "now-or-never": [.retryLater(after: .milliseconds(1500), reason: "503"), .delivered],
        ])
        let (dispatcher, worker) = DispatcherAndOutboxTests.outbox(provider, store: store, maximumDelay: .seconds(5))
        try await DispatcherAndOutboxTests.running([store, worker]) { () async throws in
            try await dispatcher.enqueue(
                PushNotification(payload: .object([:]), timeToLive: 600), appID: "app", frontEnd: "test", tokens: ["long"]
            )
            try await dispatcher.enqueue(PushNotification(payload: .object([:]), timeToLive: 1), appID: "app", frontEnd: "test", tokens: ["short"])
            try await dispatcher.enqueue(PushNotification(payload: .object([:]), timeToLive: 0), appID: "app", frontEnd: "test", tokens: ["now-or-never"])
            #expect(try await DispatcherAndOutboxTests.eventually { () async throws in try await store.pendingCount() == 0 })
            // Sent at once with all of it, then again 1.5 s or more later with at least a second less.
            let long = provider.timesToLive(of: "long")
            #expect(long.count == 2)
            #expect(long.first == 600)
            #expect(long.last.flatMap { $0 }.map { $0 < 600 && $0 >= 500 } == true, "\(long)")
            // One second to live: gone by the time of the retry.
            #expect(provider.timesToLive(of: "short") == [1])
            // 0 asks the provider for now or never: after a failed try, never.
            #expect(provider.timesToLive(of: "now-or-never") == [0])
        }
    }

    /// A back end's own time to live (a Web Push app's `ttl`, sent when the front end states none) counts
    /// from acceptance too; one the front end states wins over it.
    @Test func anAppsOwnTimeToLiveCountsFromAcceptance() async throws {
        let (store, _) = try await DispatcherAndOutboxTests.openStore()
        let provider = ScriptedProvider(
            appID: "app",
            script: [
                "unstated": [.retryLater(after: .milliseconds(1500), reason: "503"), .delivered],
                "stated": [.retryLater(after: .milliseconds(1500), reason: "503"), .delivered],
            ],
            sharesOneCircuit: false, defaultTimeToLive: 600
        )
        let (dispatcher, worker) = DispatcherAndOutboxTests.outbox(provider, store: store, maximumDelay: .seconds(5))
        try await DispatcherAndOutboxTests.running([store, worker]) { () async throws in
            try await dispatcher.enqueue(PushNotification(payload: .object([:])), appID: "app", frontEnd: "test", tokens: ["unstated"])
            try await dispatcher.enqueue(PushNotification(payload: .object([:]), timeToLive: 60), appID: "app", frontEnd: "test", tokens: ["stated"])
            #expect(try await DispatcherAndOutboxTests.eventually { () async throws in try await store.pendingCount() == 0 })
            let unstated = provider.timesToLive(of: "unstated")
            #expect(unstated.count == 2)
            // The first try within a second of queueing sends all of it (a starved machine may take longer).
            #expect(unstated.first.flatMap { $0 }.map { $0 >= 590 } == true, "\(unstated)")
            #expect(unstated.last.flatMap { $0 }.map { $0 < 600 && $0 >= 500 } == true, "\(unstated)")
            let stated = provider.timesToLive(of: "stated")
            #expect(stated.first.flatMap { $0 }.map { $0 >= 50 } == true, "\(stated)")
            #expect(stated.last.flatMap { $0 }.map { $0 < 60 } == true, "\(stated)")
        }
    }

    /// An entry of an app this instance lacks is not delivered, but its stated time to live still runs out:
    /// it ends as expired instead of waiting out the outbox's maximum age.
    @Test func anUnknownAppsEntryExpiresToo() async throws {
        let (store, _) = try await DispatcherAndOutboxTests.openStore()
        let (dispatcher, worker) = DispatcherAndOutboxTests.outboxWithoutApps(
            store: store, retry: RetryPolicy(initialDelay: .seconds(60), maximumDelay: .seconds(600), maximumAge: .seconds(3600)),
            unknownAppPause: .milliseconds(300)
        )
        try await DispatcherAndOutboxTests.running([store, worker]) { () async throws in
            try await dispatcher.enqueue(PushNotification(payload: .object([:]), timeToLive: 1), appID: "gone", frontEnd: "test", tokens: ["a"])
            try await dispatcher.enqueue(PushNotification(payload: .object([:])), appID: "gone", frontEnd: "test", tokens: ["b"])
            // The first round finds no app; a round after its second is over ends the entry with one.
            #expect(try await DispatcherAndOutboxTests.eventually(timeout: .seconds(10)) { () async throws in try await store.pendingCount() == 1 })
            // The one without a time to live waits for its app.
            try await Task.sleep(for: .milliseconds(700))
            #expect(try await store.pendingCount() == 1)
        }
    }
}
