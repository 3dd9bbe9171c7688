import Synchronization
import Foundation
import PushgateCore
import PushgateDelivery
import PushgateStore
import PushgateStoreSQLite
import ServiceLifecycle
import Testing

@Suite("Dispatcher and outbox")
struct DispatcherAndOutboxTests {
    static let notification = PushNotification(payload: .object(["data": .object(["k": .string("v")])]))

    static func openStore(at path: String? = nil) async throws -> (SQLiteStore, String) {
        let path = path ?? FileManager.default.temporaryDirectory.appendingPathComponent("delivery-\(UUID().uuidString).sqlite").path
        return (try await SQLiteStore.open(path: path, logger: TestLogging.quiet), path)
    }

    static func device(_ token: String, app: String = "app") -> DeviceRegistration {
        DeviceRegistration(namespace: "test", deviceID: "d-\(token)", appID: app, pushToken: token, createdAt: Date(), updatedAt: Date())
    }

    /// A dispatcher for `provider` and an outbox worker over `store` that polls every 20 ms and retries
    /// after 10 ms at first, at most `maximumDelay` apart, for a minute.
    static func outbox(_ provider: ScriptedProvider, store: SQLiteStore, maximumDelay: Duration) -> (Dispatcher, OutboxWorker) {
        let wakeUp = OutboxWakeUp()
        let metrics = DeliveryMetrics(factory: NoMetrics.factory)
        let dispatcher = Dispatcher(directory: ProviderDirectory([provider]), store: store, metrics: metrics, wakeUp: wakeUp, logger: TestLogging.quiet)
        var configuration = OutboxWorker.Configuration()
        configuration.retry = RetryPolicy(initialDelay: .milliseconds(10), maximumDelay: maximumDelay, maximumAge: .seconds(60))
        configuration.pollInterval = .milliseconds(20)
        let worker = OutboxWorker(dispatcher: dispatcher, store: store, metrics: metrics, wakeUp: wakeUp, configuration: configuration, logger: TestLogging.quiet)
        return (dispatcher, worker)
    }

    /// A dispatcher that configures no app, and its worker: entries come round after `unknownAppPause`.
    static func outboxWithoutApps(store: SQLiteStore, retry: RetryPolicy, unknownAppPause: Duration) -> (Dispatcher, OutboxWorker) {
        let wakeUp = OutboxWakeUp()
        let metrics = DeliveryMetrics(factory: NoMetrics.factory)
        let dispatcher = Dispatcher(directory: ProviderDirectory([]), store: store, metrics: metrics, wakeUp: wakeUp, logger: TestLogging.quiet)
        var configuration = OutboxWorker.Configuration()
        configuration.retry = retry
        configuration.pollInterval = .milliseconds(20)
        configuration.unknownAppPause = unknownAppPause
        let worker = OutboxWorker(dispatcher: dispatcher, store: store, metrics: metrics, wakeUp: wakeUp, configuration: configuration, logger: TestLogging.quiet)
        return (dispatcher, worker)
    }

    /// Runs the services in a service group around `body`, then shuts them down gracefully in reverse
    /// order (the worker before the store), as `pushgate serve` does.
    static func running(_ services: [any Service], _ body: @Sendable () async throws -> Void) async throws {
        let group = ServiceGroup(services: services, logger: TestLogging.quiet)
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            do {
                try await body()
            } catch {
                await group.triggerGracefulShutdown()
                try? await tasks.waitForAll()
                throw error
            }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
    }

    static func eventually(timeout: Duration = .seconds(60), _ condition: @Sendable () async throws -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if try await condition() { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return false
    }

    @Test func deliveringNowReportsTheOutcomeAndRecordsInvalidTokens() async throws {
        let (store, _) = try await Self.openStore()
        let provider = ScriptedProvider(appID: "app", script: ["gone": [.invalidToken(reason: "Unregistered")]])
        let dispatcher = Dispatcher(directory: ProviderDirectory([provider]), store: store, metrics: DeliveryMetrics(factory: NoMetrics.factory), logger: TestLogging.quiet)
        try await Self.running([store]) { () async throws in
            try await store.saveDevice(Self.device("gone"))
            try await store.saveDevice(Self.device("fine"))
            #expect(await dispatcher.deliver(Self.notification, appID: "app", token: "fine", timeout: .seconds(5)) == .delivered)
            #expect(await dispatcher.deliver(Self.notification, appID: "app", token: "gone", timeout: .seconds(5)) == .invalidToken(reason: "Unregistered"))
            #expect(try await store.invalidToken(appID: "app", pushToken: "gone")?.reason == "Unregistered")
            #expect(try await store.device(namespace: "test", deviceID: "d-gone") == nil)
            #expect(try await store.device(namespace: "test", deviceID: "d-fine") != nil)
            guard case .rejected = await dispatcher.deliver(Self.notification, appID: "other", token: "x", timeout: .seconds(5)) else {
                Issue.record("an unknown app must be rejected")
                return
            }
        }
    }

    @Test func aFullInflightLimitFailsFastInsteadOfQueueing() async throws {
        let (store, _) = try await Self.openStore()
        let slow = ScriptedProvider(appID: "slow", delay: .seconds(6))
        let fast = ScriptedProvider(appID: "fast")
        let dispatcher = Dispatcher(
            directory: ProviderDirectory([slow, fast]), inflightLimits: ["slow": 1], store: store,
            metrics: DeliveryMetrics(factory: NoMetrics.factory), logger: TestLogging.quiet
        )
        try await Self.running([store]) { () async throws in
            async let first = dispatcher.deliver(Self.notification, appID: "slow", token: "a", timeout: .seconds(5))
            // The first holds the app's one slot once it reached the provider (a busy machine may take a while).
            let reached = ContinuousClock.now + .seconds(30)
            while slow.deliveredTokens.isEmpty, ContinuousClock.now < reached { try await Task.sleep(for: .milliseconds(10)) }
            let started = ContinuousClock.now
            guard case .retryLater(_, let reason) = await dispatcher.deliver(Self.notification, appID: "slow", token: "b", timeout: .seconds(5)) else {
                Issue.record("expected the limit to refuse the second delivery")
                return
            }
            // The limit refused it (queueing behind the first would have delivered it after about 6 s).
            #expect(reason == "in-flight limit reached for slow")
            #expect(ContinuousClock.now - started < .seconds(60))
            // Another app is not held up by the slow one.
            #expect(await dispatcher.deliver(Self.notification, appID: "fast", token: "c", timeout: .seconds(5)) == .delivered)
            #expect(await first == .delivered)
        }
    }

    @Test func theOutboxDeliversEachEntryOnceAndRetriesTransientFailures() async throws {
        let (store, _) = try await Self.openStore()
        let provider = ScriptedProvider(appID: "app", script: [
            "flaky": [.retryLater(after: .milliseconds(10), reason: "503"), .retryLater(after: nil, reason: "503"), .delivered],
            "dead": [.invalidToken(reason: "410")],
            "refused": [.rejected(reason: "PayloadTooLarge")],
        ])
        let (dispatcher, worker) = Self.outbox(provider, store: store, maximumDelay: .milliseconds(50))
        try await Self.running([store, worker]) { () async throws in
            let tokens = (0..<250).map { "t\($0)" } + ["flaky", "dead", "refused"]
            try await dispatcher.enqueue(Self.notification, appID: "app", frontEnd: "test", tokens: tokens)
            #expect(try await Self.eventually { () async throws in try await store.pendingCount() == 0 })
            let delivered = provider.deliveredTokens
            #expect(delivered.filter { $0.hasPrefix("t") }.count == 250)
            #expect(Set(delivered.filter { $0.hasPrefix("t") }).count == 250)
            #expect(delivered.filter { $0 == "flaky" }.count == 3)
            #expect(delivered.filter { $0 == "dead" }.count == 1)
            #expect(delivered.filter { $0 == "refused" }.count == 1)
            #expect(try await store.invalidToken(appID: "app", pushToken: "dead") != nil)
        }
    }

    /// Records what it hears.
    final class RecordingObserver: DeliveryOutcomeObserver {
        let frontEnd = "listener"
        let heard = Mutex<[(token: String, outcome: String, context: JSONValue)]>([])

        func deliveryEnded(_ report: DeliveryReport, appID: String, token: String, outcome: DeliveryOutcome) async {
            self.heard.withLock { $0.append((token, outcome.label, report.context)) }
        }
    }

    @Test func theFrontEndThatAskedHearsEachFinalOutcomeOnce() async throws {
        let (store, _) = try await Self.openStore()
        let provider = ScriptedProvider(appID: "app", script: [
            "flaky": [.retryLater(after: nil, reason: "503"), .delivered], "dead": [.invalidToken(reason: "410")],
            "down": [.retryLater(after: .seconds(3600), reason: "503")],
        ])
        let wakeUp = OutboxWakeUp()
        let metrics = DeliveryMetrics(factory: NoMetrics.factory)
        let dispatcher = Dispatcher(directory: ProviderDirectory([provider]), store: store, metrics: metrics, wakeUp: wakeUp, logger: TestLogging.quiet)
        var configuration = OutboxWorker.Configuration()
        configuration.retry = RetryPolicy(initialDelay: .milliseconds(10), maximumDelay: .seconds(1), maximumAge: .seconds(60))
        configuration.pollInterval = .milliseconds(20)
        let observer = RecordingObserver()
        let worker = OutboxWorker(
            dispatcher: dispatcher, store: store, metrics: metrics, wakeUp: wakeUp, configuration: configuration, observers: [observer],
            logger: TestLogging.quiet
        )
        try await Self.running([store, worker]) { () async throws in
            try await dispatcher.enqueue([
                Dispatcher.Queued(Self.notification, appID: "app", frontEnd: "test", tokens: ["ok", "flaky", "dead", "down"], report: DeliveryReport(frontEnd: "listener", context: ["n": "id"])),
                Dispatcher.Queued(Self.notification, appID: "app", frontEnd: "test", tokens: ["unreported"]),
                Dispatcher.Queued(Self.notification, appID: "app", frontEnd: "test", tokens: ["elsewhere"], report: DeliveryReport(frontEnd: "nobody", context: .null)),
            ])
            #expect(try await Self.eventually { () async throws in try await store.pendingCount() == 0 })
            // Observers hear an outcome after it is stored, so the last one may follow the empty outbox.
            #expect(try await Self.eventually { () async throws in observer.heard.withLock { $0.count } >= 4 })
            let heard = observer.heard.withLock { $0 }.sorted { $0.token < $1.token }
            #expect(heard.map(\.token) == ["dead", "down", "flaky", "ok"])
            #expect(heard.map(\.outcome) == ["invalid_token", "retry_later", "delivered", "delivered"])
            #expect(heard.allSatisfy { $0.context == ["n": "id"] })
            #expect(Set(provider.deliveredTokens).isSuperset(of: ["unreported", "elsewhere"]))
        }
    }

    @Test func concurrentEnqueuesAreAllStoredAndEachCallerHearsOfItsOwn() async throws {
        let (store, _) = try await Self.openStore()
        let metrics = DeliveryMetrics(factory: NoMetrics.factory)
        let dispatcher = Dispatcher(directory: ProviderDirectory([]), store: store, metrics: metrics, logger: TestLogging.quiet)
        try await Self.running([store]) { () async throws in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for caller in 0..<200 {
                    group.addTask { try await dispatcher.enqueue(Self.notification, appID: "app", frontEnd: "test", tokens: (0..<5).map { "c\(caller)-\($0)" }) }
                }
                try await group.waitForAll()
            }
            #expect(try await store.pendingCount() == 1000)
        }
        // A closed store fails every caller whose messages were in the write.
        await #expect(throws: (any Error).self) { try await dispatcher.enqueue(Self.notification, appID: "app", frontEnd: "test", tokens: ["late"]) }
    }

    /// An app removed by a configuration reload keeps its queued entries; added back, it delivers them.
    @Test func entriesOfAnAppNoLongerConfiguredWaitForItToComeBack() async throws {
        let (store, _) = try await Self.openStore()
        let provider = ScriptedProvider(appID: "app")
        let (dispatcher, worker) = Self.outboxWithoutApps(
            store: store, retry: RetryPolicy(initialDelay: .milliseconds(10), maximumDelay: .milliseconds(50), maximumAge: .seconds(600)),
            unknownAppPause: .milliseconds(50)
        )
        try await Self.running([store, worker]) { () async throws in
            try await dispatcher.enqueue(Self.notification, appID: "app", frontEnd: "test", tokens: ["a", "b", "c"])
            // Several rounds find no app for the entries; they stay.
            try await Task.sleep(for: .milliseconds(500))
            #expect(try await store.pendingCount() == 3)
            dispatcher.reconfigure(ProviderDirectory([provider]), inflightLimits: [:], resetting: ["app"])
            #expect(try await Self.eventually { () async throws in try await store.pendingCount() == 0 })
            #expect(provider.deliveredTokens.sorted() == ["a", "b", "c"])
        }
    }

    /// An instance that does not configure an entry's app (while instances on one database run different
    /// configurations: a rolling reload, a canary) puts it back for a short fixed pause, not the growing
    /// backoff of failed deliveries, so an instance that has the app, or this one once reloaded, takes it
    /// soon.
    @Test func entriesOfAnAppThisInstanceLacksComeRoundAfterAShortPauseNotTheBackoff() async throws {
        let (store, _) = try await Self.openStore()
        let provider = ScriptedProvider(appID: "app")
        // The backoff of failed deliveries would wait a minute after the first round.
        let (dispatcher, worker) = Self.outboxWithoutApps(
            store: store, retry: RetryPolicy(initialDelay: .seconds(60), maximumDelay: .seconds(600), maximumAge: .seconds(3600)),
            unknownAppPause: .milliseconds(300)
        )
        try await Self.running([store, worker]) { () async throws in
            try await dispatcher.enqueue(Self.notification, appID: "app", frontEnd: "test", tokens: ["a", "b"])
            // Rounds that find no app for the entries.
            try await Task.sleep(for: .milliseconds(1_000))
            #expect(try await store.pendingCount() == 2)
            dispatcher.reconfigure(ProviderDirectory([provider]), inflightLimits: [:], resetting: ["app"])
            #expect(try await Self.eventually(timeout: .seconds(10)) { () async throws in try await store.pendingCount() == 0 })
            #expect(provider.deliveredTokens.sorted() == ["a", "b"])
        }
    }

    @Test func entriesTooOldToRetryAreGivenUp() async throws {
        let (store, _) = try await Self.openStore()
        let provider = ScriptedProvider(appID: "app", script: ["down": [.retryLater(after: .seconds(3600), reason: "503")]])
        let wakeUp = OutboxWakeUp()
        let metrics = DeliveryMetrics(factory: NoMetrics.factory)
        let dispatcher = Dispatcher(directory: ProviderDirectory([provider]), store: store, metrics: metrics, wakeUp: wakeUp, logger: TestLogging.quiet)
        var configuration = OutboxWorker.Configuration()
        configuration.retry = RetryPolicy(initialDelay: .milliseconds(10), maximumDelay: .seconds(1), maximumAge: .seconds(60))
        let worker = OutboxWorker(dispatcher: dispatcher, store: store, metrics: metrics, wakeUp: wakeUp, configuration: configuration, logger: TestLogging.quiet)
        try await Self.running([store, worker]) { () async throws in
            try await dispatcher.enqueue(Self.notification, appID: "app", frontEnd: "test", tokens: ["down"])
            #expect(try await Self.eventually { () async throws in try await store.pendingCount() == 0 })
            #expect(provider.deliveredTokens == ["down"])
        }
    }

    @Test func acceptedWorkSurvivesARestart() async throws {
        let (first, path) = try await Self.openStore()
        let metrics = DeliveryMetrics(factory: NoMetrics.factory)
        // The first process accepts work and stops before delivering anything.
        try await Self.running([first]) { () async throws in
            let dispatcher = Dispatcher(directory: ProviderDirectory([]), store: first, metrics: metrics, logger: TestLogging.quiet)
            try await dispatcher.enqueue(Self.notification, appID: "app", frontEnd: "test", tokens: ["a", "b", "c"])
        }
        // The next one finds it and delivers it.
        let (second, _) = try await Self.openStore(at: path)
        let provider = ScriptedProvider(appID: "app")
        let wakeUp = OutboxWakeUp()
        let dispatcher = Dispatcher(directory: ProviderDirectory([provider]), store: second, metrics: metrics, wakeUp: wakeUp, logger: TestLogging.quiet)
        var configuration = OutboxWorker.Configuration()
        configuration.pollInterval = .milliseconds(20)
        let worker = OutboxWorker(dispatcher: dispatcher, store: second, metrics: metrics, wakeUp: wakeUp, configuration: configuration, logger: TestLogging.quiet)
        try await Self.running([second, worker]) { () async throws in
            #expect(try await Self.eventually { () async throws in try await second.pendingCount() == 0 })
            #expect(Set(provider.deliveredTokens) == ["a", "b", "c"])
        }
    }

    @Test func shutdownFinishesDeliveriesInFlight() async throws {
        let (store, _) = try await Self.openStore()
        let provider = ScriptedProvider(appID: "app", delay: .milliseconds(400))
        let wakeUp = OutboxWakeUp()
        let metrics = DeliveryMetrics(factory: NoMetrics.factory)
        let dispatcher = Dispatcher(directory: ProviderDirectory([provider]), store: store, metrics: metrics, wakeUp: wakeUp, logger: TestLogging.quiet)
        let worker = OutboxWorker(dispatcher: dispatcher, store: store, metrics: metrics, wakeUp: wakeUp, logger: TestLogging.quiet)
        try await Self.running([store, worker]) { () async throws in
            try await dispatcher.enqueue(Self.notification, appID: "app", frontEnd: "test", tokens: ["slow"])
            #expect(try await Self.eventually { () async throws in provider.deliveredTokens == ["slow"] })
            // Shutdown starts while the delivery is in flight (the helper triggers it when this returns).
        }
        let (reopened, _) = try await Self.openStore(at: store.path)
        try await Self.running([reopened]) { () async throws in
            #expect(try await reopened.pendingCount() == 0)
        }
    }
}
