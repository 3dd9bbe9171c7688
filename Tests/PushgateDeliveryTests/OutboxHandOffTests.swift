import Foundation
import Logging
import PushgateCore
@testable import PushgateDelivery
import PushgateStore
import PushgateStoreSQLite
import ServiceLifecycle
import Testing

/// What an instance enqueues while its worker runs is stored leased to that worker and delivered from
/// memory: no other worker on the store takes it, and what is left at shutdown is claimed after the lease.
@Suite("Outbox hand-off")
struct OutboxHandOffTests {
    @Test func entriesHandedToTheRunningWorkerAreDeliveredByItAloneAndOnce() async throws {
        let (store, _) = try await DispatcherAndOutboxTests.openStore()
        let metrics = DeliveryMetrics(factory: NoMetrics.factory)
        var configuration = OutboxWorker.Configuration()
        configuration.pollInterval = .milliseconds(10)
        // This instance: its dispatcher and worker share a wake-up, so its enqueues are handed over.
        let local = ScriptedProvider(appID: "app")
        let wakeUp = OutboxWakeUp()
        let dispatcher = Dispatcher(directory: ProviderDirectory([local]), store: store, metrics: metrics, wakeUp: wakeUp, logger: TestLogging.quiet)
        let worker = OutboxWorker(
            dispatcher: dispatcher, store: store, metrics: metrics, wakeUp: wakeUp, configuration: configuration, owner: "local", logger: TestLogging.quiet
        )
        // Another instance on the same store, claiming every 10 ms.
        let other = ScriptedProvider(appID: "app")
        let otherWakeUp = OutboxWakeUp()
        let otherDispatcher = Dispatcher(
            directory: ProviderDirectory([other]), store: store, metrics: metrics, wakeUp: otherWakeUp, logger: TestLogging.quiet
        )
        let otherWorker = OutboxWorker(
            dispatcher: otherDispatcher, store: store, metrics: metrics, wakeUp: otherWakeUp, configuration: configuration, owner: "other",
            logger: TestLogging.quiet
        )
        try await DispatcherAndOutboxTests.running([store, worker, otherWorker]) { () async throws in
            #expect(try await DispatcherAndOutboxTests.eventually { wakeUp.handOff.reserve(0, now: Date()) != nil })
            try await withThrowingTaskGroup(of: Void.self) { group in
                for caller in 0..<30 {
                    group.addTask {
                        try await dispatcher.enqueue(DispatcherAndOutboxTests.notification, appID: "app", frontEnd: "test", tokens: (0..<10).map { "c\(caller)-\($0)" })
                    }
                }
                try await group.waitForAll()
            }
            #expect(try await DispatcherAndOutboxTests.eventually { () async throws in try await store.pendingCount() == 0 })
            #expect(local.deliveredTokens.count == 300)
            #expect(Set(local.deliveredTokens).count == 300)
            #expect(other.deliveredTokens.isEmpty)
        }
    }

    @Test func withoutARunningWorkerOrRoomEnqueuesAreLeftForAnyWorkerToClaim() async throws {
        let handOff = OutboxHandOff(capacity: 10)
        let now = Date()
        #expect(handOff.reserve(1, now: now) == nil)
        handOff.open(owner: "w", lease: .seconds(60))
        let lease = try #require(handOff.reserve(8, now: now))
        #expect(lease == OutboxLease(owner: "w", until: now.addingTimeInterval(60)))
        // Promised room counts: 8 + 3 is over the capacity.
        #expect(handOff.reserve(3, now: now) == nil)
        let entries = (0..<8).map { n in
            OutboxHandOff.Entry(
                id: Int64(n), appID: "app", frontEnd: "test", tokens: ["t\(n)"], content: OutboxContent(notification: DispatcherAndOutboxTests.notification, report: nil),
                createdAt: now, leaseUntil: lease.until
            )
        }
        handOff.fulfil(8, with: entries, owner: "w")
        #expect(handOff.take(5).map(\.id) == [0, 1, 2, 3, 4])
        #expect(handOff.waiting == 3)
        // A failed write gives its room back.
        #expect(handOff.reserve(7, now: now) != nil)
        handOff.fulfil(7, with: [], owner: "w")
        #expect(handOff.waiting == 3)
        // Closing drops what waits (it stays leased in the store) and stops further hand-offs.
        #expect(handOff.close() == 3)
        #expect(handOff.reserve(1, now: now) == nil)
        handOff.fulfil(0, with: entries, owner: "w")
        #expect(handOff.take(10).isEmpty)
    }

    @Test func roomAndTakesCountTokensAndATakeHoldsWholeEntries() throws {
        let handOff = OutboxHandOff(capacity: 130)
        let now = Date()
        handOff.open(owner: "w", lease: .seconds(60))
        // Entries of 40, 30, 50 and 1 tokens: 121 tokens.
        #expect(handOff.reserve(131, now: now) == nil)
        let lease = try #require(handOff.reserve(121, now: now))
        let sizes = [40, 30, 50, 1]
        let entries = sizes.enumerated().map { n, size in
            OutboxHandOff.Entry(
                id: Int64(n), appID: "app", frontEnd: "test", tokens: (0..<size).map { "t\(n)-\($0)" },
                content: OutboxContent(notification: DispatcherAndOutboxTests.notification, report: nil), createdAt: now, leaseUntil: lease.until
            )
        }
        handOff.fulfil(121, with: entries, owner: "w")
        #expect(handOff.waiting == 121)
        // 121 waiting tokens leave room for 9, not 10.
        #expect(handOff.reserve(10, now: now) == nil)
        #expect(handOff.reserve(9, now: now) != nil)
        handOff.fulfil(9, with: [], owner: "w")
        // 40 + 30 fit 75; the next entry (50) would not, and is not split.
        #expect(handOff.take(75).map(\.id) == [0, 1])
        // An entry larger than the limit is still taken, alone.
        #expect(handOff.take(20).map(\.id) == [2])
        #expect(handOff.waiting == 1)
        #expect(handOff.take(20).map(\.id) == [3])
        #expect(handOff.take(20).isEmpty)
        #expect(handOff.waiting == 0)
    }

    /// Takes go round the apps with entries waiting: a fresh entry of one app is taken before another
    /// app's older entries run out, each app's entries stay in order, and an app that had nothing waiting
    /// gets its turn after at most one entry of each other app.
    @Test func takesGoRoundRobinAcrossApps() throws {
        let handOff = OutboxHandOff(capacity: 1_000)
        let now = Date()
        handOff.open(owner: "w", lease: .seconds(60))
        func hand(_ app: String, _ ids: Range<Int64>) throws {
            let lease = try #require(handOff.reserve(ids.count, now: now))
            let entries = ids.map { id in
                OutboxHandOff.Entry(
                    id: id, appID: app, frontEnd: "test", tokens: ["t\(id)"], content: OutboxContent(notification: DispatcherAndOutboxTests.notification, report: nil),
                    createdAt: now, leaseUntil: lease.until
                )
            }
            handOff.fulfil(ids.count, with: entries, owner: "w")
        }
        // A backlog of app a, then one entry of app b.
        try hand("a", 0..<100)
        try hand("b", 100..<101)
        let first = handOff.take(5)
        #expect(first.count == 5)
        #expect(first.contains { $0.id == 100 }, "b's entry is in the first take")
        #expect(first.filter { $0.appID == "a" }.map(\.id) == [0, 1, 2, 3])
        // Only a waits: its entries follow in order.
        #expect(handOff.take(3).map(\.id) == [4, 5, 6])
        // c arrives while a is served: its entry comes after one more of a at most.
        try hand("c", 200..<202)
        try hand("a", 101..<102)
        let third = handOff.take(4)
        #expect(third.map(\.appID).filter { $0 == "c" }.count == 2)
        #expect(third.filter { $0.appID == "a" }.map(\.id) == [7, 8])
        #expect(handOff.waiting == 100 - 9 + 1)
        // Everything else is a's, in order.
        #expect(handOff.take(1_000).map(\.id) == Array(9..<100) + [101])
        #expect(handOff.waiting == 0)
    }

    /// Within an app, takes go round its front ends as they go round apps: a fresh entry that one front
    /// end queued is taken before another front end's older backlog of the same app runs out, and each
    /// front end's entries stay in order.
    @Test func takesGoRoundRobinAcrossTheFrontEndsOfAnApp() throws {
        let handOff = OutboxHandOff(capacity: 1_000)
        let now = Date()
        handOff.open(owner: "w", lease: .seconds(60))
        func hand(_ frontEnd: String, _ ids: Range<Int64>) throws {
            let lease = try #require(handOff.reserve(ids.count, now: now))
            let entries = ids.map { id in
                OutboxHandOff.Entry(
                    id: id, appID: "app", frontEnd: frontEnd, tokens: ["t\(id)"],
                    content: OutboxContent(notification: DispatcherAndOutboxTests.notification, report: nil), createdAt: now, leaseUntil: lease.until
                )
            }
            handOff.fulfil(ids.count, with: entries, owner: "w")
        }
        // A backlog that gorush queued for the app, then one entry that nextcloud queued for it.
        try hand("gorush", 0..<100)
        try hand("nextcloud", 100..<101)
        let first = handOff.take(3)
        #expect(first.map(\.frontEnd).filter { $0 == "nextcloud" } == ["nextcloud"], "nextcloud's entry is in the first take")
        #expect(first.filter { $0.frontEnd == "gorush" }.map(\.id) == [0, 1])
        #expect(handOff.take(1_000).map(\.id) == Array(2..<100))
    }

    /// A helper lane keeps going after a full round; a round of one 100-token entry is full at a batch
    /// size of 128, though it holds fewer than 128 tokens.
    @Test func aRoundOfWholeEntriesIsFullWithinAnEntryOfTheBatchSize() async throws {
        let (store, _) = try await DispatcherAndOutboxTests.openStore()
        let metrics = DeliveryMetrics(factory: NoMetrics.factory)
        let dispatcher = Dispatcher(directory: ProviderDirectory([]), store: store, metrics: metrics, logger: TestLogging.quiet)
        let worker = OutboxWorker(dispatcher: dispatcher, store: store, metrics: metrics, wakeUp: OutboxWakeUp(), logger: TestLogging.quiet)
        #expect(Dispatcher.tokensPerOutboxEntry == 100)
        #expect(!worker.isFull(round: 0))
        #expect(!worker.isFull(round: 28))
        #expect(worker.isFull(round: 29))
        #expect(worker.isFull(round: 100))
        #expect(worker.isFull(round: 128))
        var small = OutboxWorker.Configuration()
        small.batchSize = 10
        let smallWorker = OutboxWorker(
            dispatcher: dispatcher, store: store, metrics: metrics, wakeUp: OutboxWakeUp(), configuration: small, logger: TestLogging.quiet
        )
        #expect(!smallWorker.isFull(round: 0))
        #expect(smallWorker.isFull(round: 1))
    }

    @Test func whatShutdownLeavesIsClaimedWhenItsLeaseEnds() async throws {
        let (store, path) = try await DispatcherAndOutboxTests.openStore()
        let metrics = DeliveryMetrics(factory: NoMetrics.factory)
        let wakeUp = OutboxWakeUp()
        let dispatcher = Dispatcher(directory: ProviderDirectory([]), store: store, metrics: metrics, wakeUp: wakeUp, logger: TestLogging.quiet)
        // A worker that has taken the hand-off but has not delivered yet (it stops right after).
        wakeUp.handOff.open(owner: "gone", lease: .seconds(60))
        try await DispatcherAndOutboxTests.running([store]) { () async throws in
            try await dispatcher.enqueue(DispatcherAndOutboxTests.notification, appID: "app", frontEnd: "test", tokens: ["a", "b"])
        }
        #expect(wakeUp.handOff.close() == 2)
        let (reopened, _) = try await DispatcherAndOutboxTests.openStore(at: path)
        try await DispatcherAndOutboxTests.running([reopened]) { () async throws in
            #expect(try await reopened.claimDue(now: Date(), limit: 10, leaseFor: .seconds(30), owner: "next").isEmpty)
            let later = try await reopened.claimDue(now: Date().addingTimeInterval(61), limit: 10, leaseFor: .seconds(30), owner: "next")
            #expect(later.flatMap(\.message.pushTokens) == ["a", "b"])
            #expect(try OutboxPayloadCoding.decode(later[0].message.payload) == DispatcherAndOutboxTests.notification)
        }
    }
}
