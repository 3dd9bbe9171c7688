public import Foundation
public import Logging
import PushgateCore
public import PushgateStore
public import ServiceLifecycle

/// Delivers what the outbox holds: claims due entries (leased, so several instances share the outbox
/// without sending anything twice), delivers them with bounded concurrency, and completes, reschedules
/// (exponential backoff with jitter, honouring Retry-After) or gives them up.
///
/// On graceful shutdown it stops claiming and finishes the deliveries in flight; entries it had leased
/// but not started go back to the outbox when their lease ends.
public struct OutboxWorker: Service, CustomStringConvertible {
    /// Tuning.
    public struct Configuration: Sendable {
        /// Entries claimed per round.
        public var batchSize = 128
        /// Deliveries in flight at once (as many as a round holds, so a round is one wave of deliveries
        /// and finishes well within its lease even when every delivery runs to its deadline).
        public var concurrency = 128
        /// How long a claim holds an entry.
        public var lease: Duration = .seconds(60)
        /// The pause between empty rounds (an enqueue in this process ends it early).
        public var pollInterval: Duration = .milliseconds(500)
        /// The deadline of one delivery.
        public var deliveryTimeout: Duration = .seconds(30)
        /// Backoff and give-up rules.
        public var retry = RetryPolicy()

        /// The defaults.
        public init() {}
    }

    private let dispatcher: Dispatcher
    private let store: any PushStore
    private let metrics: DeliveryMetrics
    private let wakeUp: OutboxWakeUp
    private let configuration: Configuration
    private let owner: String
    private let observers: [String: any DeliveryOutcomeObserver]
    private let logger: Logger

    public var description: String { "OutboxWorker" }

    /// Creates a worker.
    /// - Parameter owner: this instance's name in leases; unique per process.
    public init(
        dispatcher: Dispatcher,
        store: any PushStore,
        metrics: DeliveryMetrics,
        wakeUp: OutboxWakeUp,
        configuration: Configuration = Configuration(),
        owner: String = "pushgate-\(UUID().uuidString.prefix(8))",
        observers: [any DeliveryOutcomeObserver] = [],
        logger: Logger
    ) {
        self.observers = Dictionary(observers.map { ($0.frontEnd, $0) }, uniquingKeysWith: { first, _ in first })
        self.dispatcher = dispatcher
        self.store = store
        self.metrics = metrics
        self.wakeUp = wakeUp
        self.configuration = configuration
        self.owner = owner
        self.logger = logger
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                let handled = await self.runRound()
                if handled == 0 {
                    await self.wakeUp.wait(timeout: self.configuration.pollInterval)
                }
            }
        }
    }

    /// Claims one batch and delivers it; returns how many entries it handled.
    func runRound() async -> Int {
        let entries: [OutboxEntry]
        do {
            entries = try await self.store.claimDue(
                now: Date(), limit: self.configuration.batchSize, leaseFor: self.configuration.lease, owner: self.owner
            )
        } catch {
            self.logger.warning("outbox: cannot claim entries", metadata: ["error": "\(error)"])
            return 0
        }
        // Entries queued together share their payload: each distinct payload is decoded once.
        var decoded: [[UInt8]: PushNotification] = [:]
        var reports: [[UInt8]: DeliveryReport] = [:]
        for entry in entries where decoded[entry.message.payload] == nil {
            if let notification = try? OutboxPayloadCoding.decode(entry.message.payload) { decoded[entry.message.payload] = notification }
            if !self.observers.isEmpty, let report = OutboxPayloadCoding.report(entry.message.payload) { reports[entry.message.payload] = report }
        }
        let notifications = decoded
        let requests = reports
        // Deliveries run to completion even when shutdown cancels the loop: their outcome must be stored.
        await Task {
            let finished = await withTaskGroup(of: (OutboxEntry, DeliveryOutcome)?.self) { group in
                var finished: [(OutboxEntry, DeliveryOutcome)] = []
                finished.reserveCapacity(entries.count)
                var running = 0
                for entry in entries {
                    if running >= self.configuration.concurrency {
                        if case let done?? = await group.next() { finished.append(done) }
                        running -= 1
                    }
                    group.addTask { await self.handle(entry, notification: notifications[entry.message.payload]) }
                    running += 1
                }
                for await case let done? in group { finished.append(done) }
                return finished
            }
            await self.complete(finished, reports: requests)
        }.value
        return entries.count
    }

    /// Delivers one entry; returns it with its outcome when it is finished (delivered, refused or given
    /// up), nil when it was rescheduled.
    private func handle(_ entry: OutboxEntry, notification: PushNotification?) async -> (OutboxEntry, DeliveryOutcome)? {
        let appID = entry.message.appID
        let outcome: DeliveryOutcome
        if let notification {
            if case .found(let provider) = self.dispatcher.directory.lookup(appID) {
                outcome = await self.dispatcher.deliver(
                    notification, via: provider, token: entry.message.pushToken, deadline: .now + self.configuration.deliveryTimeout
                )
            } else {
                outcome = .rejected(reason: "no app is configured for \(appID)")
            }
        } else {
            outcome = .rejected(reason: "unreadable outbox entry")
        }
        switch outcome {
        case .delivered, .invalidToken:
            return (entry, outcome)
        case .rejected(let reason):
            self.logger.notice("outbox: delivery refused", metadata: ["app": "\(appID)", "reason": "\(reason)"])
            return (entry, outcome)
        case .retryLater(let requested, let reason):
            let age = Date().timeIntervalSince(entry.createdAt)
            let delay = self.configuration.retry.delay(afterAttempts: entry.attempts, requested: requested, random: Double.random(in: 0..<1))
            if Duration.seconds(age) + delay > self.configuration.retry.maximumAge {
                self.metrics.recordGivenUp(appID: appID)
                self.logger.warning("outbox: giving up", metadata: ["app": "\(appID)", "attempts": "\(entry.attempts)", "reason": "\(reason)"])
                return (entry, outcome)
            }
            let notBefore = Date().addingTimeInterval(Double(delay.components.seconds) + Double(delay.components.attoseconds) / 1e18)
            do {
                _ = try await self.store.reschedule(id: entry.id, owner: self.owner, notBefore: notBefore, error: reason)
            } catch {
                // The lease runs out and the entry is tried again: at-least-once rather than lost.
                self.logger.error("outbox: cannot record an outcome", metadata: ["error": "\(error)"])
            }
            return nil
        }
    }

    /// Removes a round's finished entries in one store write, then tells the front ends that asked.
    private func complete(_ finished: [(OutboxEntry, DeliveryOutcome)], reports: [[UInt8]: DeliveryReport]) async {
        guard !finished.isEmpty else { return }
        do {
            _ = try await self.store.complete(ids: finished.map(\.0.id), owner: self.owner)
        } catch {
            // The leases run out and the entries are delivered again: at-least-once rather than lost.
            self.logger.error("outbox: cannot record outcomes", metadata: ["entries": "\(finished.count)", "error": "\(error)"])
            return
        }
        for (entry, outcome) in finished {
            guard let report = reports[entry.message.payload], let observer = self.observers[report.frontEnd] else { continue }
            await observer.deliveryEnded(report, appID: entry.message.appID, token: entry.message.pushToken, outcome: outcome)
        }
    }
}
