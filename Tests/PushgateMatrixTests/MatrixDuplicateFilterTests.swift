import Crypto
import Foundation
import Logging
import PushgateCore
@testable import PushgateMatrix
import PushgateStore
import PushgateStoreSQLite
import ServiceLifecycle
import Synchronization
import Testing

@Suite("Matrix duplicate suppression")
struct MatrixDuplicateFilterTests {
    @Test func everyDeliveredPairReachesTheStoreAndAnotherInstanceSeesIt() async throws {
        try await Self.withStore { store in
            let first = MatrixDuplicateFilter(store: store, window: 600)
            let keys = (0..<300).map { first.key(appID: "app", eventID: "$event\($0)", pushkey: "key") }
            #expect(await first.wasDelivered(keys[0]) == false)
            // Concurrent deliveries group their writes; once they are written, every pair is stored.
            await withTaskGroup(of: Void.self) { group in
                for key in keys { group.addTask { await first.recordDelivered(key) } }
            }
            await first.writesFinished()
            let second = MatrixDuplicateFilter(store: store, window: 600)
            for key in keys {
                #expect(await second.wasDelivered(key))
                let name = try #require(key.text)
                let value = try await store.counterValue(name, now: Date())
                #expect(value == 1)
            }
            #expect(await second.wasDelivered(second.key(appID: "app", eventID: "$other", pushkey: "key")) == false)
            // Concurrent questions are grouped and each gets its own answer.
            let third = MatrixDuplicateFilter(store: store, window: 600)
            let answers = await withTaskGroup(of: (Int, Bool).self) { group in
                for index in 0..<400 {
                    group.addTask { (index, await third.wasDelivered(index < 300 ? keys[index] : third.key(appID: "app", eventID: "$new\(index)", pushkey: "key"))) }
                }
                return await group.reduce(into: [Int: Bool]()) { $0[$1.0] = $1.1 }
            }
            #expect(answers.count == 400)
            #expect(answers.filter(\.value).keys.sorted() == Array(0..<300))
            // The window ends.
            #expect(await second.wasDelivered(keys[1], now: Date().addingTimeInterval(601)) == false)
            #expect(await first.wasDelivered(keys[1], now: Date().addingTimeInterval(601)) == false)
        }
    }

    /// Under a steady stream of notifications the request that starts a grouped write (or read) waits for
    /// its own group only; what came meanwhile is written (asked) by a task of its own. Before, that request
    /// wrote (asked) group after group until the stream stopped, and on PostgreSQL a group grown to
    /// thousands took longer than the store's deadline.
    @Test func underASteadyStreamTheRequestThatWritesOrAsksWaitsForOneGroup() async throws {
        try await Self.withStore { sqlite in
            // Each store call takes 100 ms more, as a busy database's would.
            let store = SlowCounters(sqlite, delay: .milliseconds(100))
            let filter = MatrixDuplicateFilter(store: store, window: 600)
            let clock = ContinuousClock()
            let keys = (0..<120).map { filter.key(appID: "app", eventID: "$e\($0)", pushkey: "key") }

            // A stream of deliveries, one every 10 ms for 1.2 s, beside the first. The first must return
            // while the stream still runs (before, it waited until the stream stopped): a test of order,
            // not of time, so a busy machine that stretches both does not change its outcome.
            let streamEnded = Flag()
            let stream = Task {
                await withTaskGroup(of: Void.self) { group in
                    for key in keys.dropFirst() {
                        group.addTask { await filter.recordDelivered(key) }
                        try? await Task.sleep(for: .milliseconds(10))
                    }
                    streamEnded.set()
                }
            }
            let wrote = await clock.measure { await filter.recordDelivered(keys[0]) }
            #expect(!streamEnded.isSet, "the first request waited \(wrote), until the stream stopped")
            await stream.value
            await filter.writesFinished()
            for key in keys {
                let name = try #require(key.text)
                let value = try await sqlite.counterValue(name, now: Date())
                #expect(value == 1)
            }

            // A stream of questions, the same way.
            let other = MatrixDuplicateFilter(store: store, window: 600)
            let questionsEnded = Flag()
            let questions = Task {
                await withTaskGroup(of: Bool.self) { group in
                    for key in keys.dropFirst() {
                        group.addTask { await other.wasDelivered(key) }
                        try? await Task.sleep(for: .milliseconds(10))
                    }
                    questionsEnded.set()
                    return await group.allSatisfy { $0 }
                }
            }
            var answer = false
            let asked = await clock.measure { answer = await other.wasDelivered(keys[0]) }
            #expect(answer)
            #expect(!questionsEnded.isSet, "the first question waited \(asked), until the stream stopped")
            #expect(await questions.value)
        }
    }

    /// Runs `body` with an SQLite store in a temporary file, running as a service, stopped afterwards.
    private static func withStore(_ body: (SQLiteStore) async throws -> Void) async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("dup-\(UUID().uuidString).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let store = try await SQLiteStore.open(path: path, logger: logger)
        let services = ServiceGroup(services: [store], logger: logger)
        async let running: Void = services.run()
        do {
            try await body(store)
        } catch {
            await services.triggerGracefulShutdown()
            try? await running
            throw error
        }
        await services.triggerGracefulShutdown()
        try await running
    }

    @Test func aKeysStoreNameKeepsItsFormatAndItsPartsCannotRunTogether() async {
        // The counter name is what instances of every version share in the store: the pushkey as the first
        // 12 bytes of its SHA-256 in hex.
        let key = MatrixDuplicateFilter.Key(appID: "im.example.ios", eventID: "$abc:example.org", pushkey: "pk", named: true)
        let digest = SHA256.hash(data: Data("pk".utf8)).prefix(12).map { String(format: "%02x", $0) }.joined()
        #expect(key.text == "matrix:dup:im.example.ios:$abc:example.org:\(digest)")
        // Parts that join to the same text are still different pairs in memory.
        let filter = MatrixDuplicateFilter(store: nil, window: 600)
        await filter.recordDelivered(filter.key(appID: "a:b", eventID: "c", pushkey: "d"))
        #expect(await filter.wasDelivered(filter.key(appID: "a:b", eventID: "c", pushkey: "d")))
        #expect(await filter.wasDelivered(filter.key(appID: "a", eventID: "b:c", pushkey: "d")) == false)
        #expect(await filter.wasDelivered(filter.key(appID: "a:b", eventID: "c", pushkey: "e")) == false)
    }

    /// Two accounts on one phone share the pushkey: their notifications of one event are told apart by
    /// the counts, the pusher's data and the device's tweaks (one highlights, the other not); a repeat of
    /// the same is the same.
    @Test func theVariantTellsAccountsApartByCountsDataAndTweaks() {
        func device(data: [String: JSONValue]? = nil, tweaks: [String: JSONValue]? = nil) -> MatrixDevice {
            MatrixDevice(appID: "im.example", pushkey: "pk", pushkeyTS: nil, data: data, tweaks: tweaks)
        }
        var notification = MatrixFixtures.majorTom()
        notification.unread = nil
        notification.missedCalls = nil
        #expect(MatrixDuplicateFilter.variant(of: device(), in: notification).isEmpty)
        let plain = MatrixDuplicateFilter.variant(of: device(tweaks: [:]), in: notification)
        #expect(plain.isEmpty, "empty tweaks are none")
        let highlighted = MatrixDuplicateFilter.variant(of: device(tweaks: ["highlight": true, "sound": "default"]), in: notification)
        #expect(!highlighted.isEmpty && highlighted != plain)
        #expect(highlighted == MatrixDuplicateFilter.variant(of: device(tweaks: ["sound": "default", "highlight": true]), in: notification))
        notification.unread = 2
        let counted = MatrixDuplicateFilter.variant(of: device(), in: notification)
        #expect(counted != MatrixDuplicateFilter.variant(of: device(tweaks: ["highlight": true]), in: notification))
        #expect(counted != MatrixDuplicateFilter.variant(of: device(data: ["format": "event_id_only"]), in: notification))
    }

    @Test func withoutASharedStoreTheMemoryAloneAnswers() async {
        let filter = MatrixDuplicateFilter(store: nil, window: 600, memoryLimit: 3)
        #expect(await filter.wasDelivered(.key("a")) == false)
        await filter.recordDelivered(.key("a"))
        #expect(await filter.wasDelivered(.key("a")))
        #expect(await filter.wasDelivered(.key("a"), now: Date().addingTimeInterval(601)) == false)
        // A full memory forgets its oldest pair to take a new one.
        for key in ["b", "c", "d"] { await filter.recordDelivered(.key(key)) }
        #expect(await filter.wasDelivered(.key("a")) == false)
        for key in ["b", "c", "d"] { #expect(await filter.wasDelivered(.key(key))) }
        #expect(filter.remembered == 3)
        // Pairs whose window ended are forgotten when the next is recorded.
        await filter.recordDelivered(.key("e"), now: Date().addingTimeInterval(601))
        #expect(await filter.wasDelivered(.key("e"), now: Date().addingTimeInterval(602)))
        #expect(filter.remembered == 1)
    }

    @Test func theMemoryForgetsInTheOrderPairsWereDelivered() {
        let start = Date(timeIntervalSince1970: 1_000_000)
        let pairs = (0..<5_000).map { MatrixPairDigest("app", "$e\($0)", "key") }
        /// A memory of at most 1,000 pairs given `pairs` at `rate` a second, each for 600 seconds, checking
        /// after each how many it keeps.
        func filled(rate: Double, keeping kept: (Int) -> Int) -> MatrixRecentPairs {
            var memory = MatrixRecentPairs(limit: 1_000)
            for (index, pair) in pairs.enumerated() {
                let now = start.addingTimeInterval(Double(index) / rate)
                memory.insert(pair, until: now.addingTimeInterval(600), now: now)
                #expect(memory.count == kept(index + 1))
            }
            return memory
        }
        // One pair a second: after 600 pairs the oldest leave as new ones come.
        let memory = filled(rate: 1) { min($0, 600) }
        let end = start.addingTimeInterval(4_999)
        #expect(pairs[4_400...].allSatisfy { memory.contains($0, at: end) })
        #expect(pairs[..<4_400].allSatisfy { !memory.contains($0, at: end) })
        // Ten a second: the limit holds, the oldest leave first.
        let full = filled(rate: 10) { min($0, 1_000) }
        let last = start.addingTimeInterval(499.9)
        #expect(pairs[4_000...].allSatisfy { full.contains($0, at: last) })
        #expect(pairs[..<4_000].allSatisfy { !full.contains($0, at: last) })
        // A pair recorded again keeps its later window, however often, and takes one place.
        var again = MatrixRecentPairs(limit: 2)
        for second in 0..<10 {
            let now = start.addingTimeInterval(Double(second))
            again.insert(pairs[0], until: now.addingTimeInterval(5), now: now)
        }
        again.insert(pairs[1], until: start.addingTimeInterval(14), now: start.addingTimeInterval(9))
        #expect(again.count == 2)
        #expect(again.contains(pairs[0], at: start.addingTimeInterval(13.5)))
        #expect(!again.contains(pairs[0], at: start.addingTimeInterval(14)))
        #expect(again.contains(pairs[1], at: start.addingTimeInterval(13.5)))
    }
}

extension MatrixDuplicateFilter.Key {
    /// A pair of the app "app" and the pushkey "key" for `event`.
    static func key(_ event: String) -> Self { .init(appID: "app", eventID: event, pushkey: "key", named: false) }
}

/// A real store's counters, each call made `delay` slower.
/// Set once by one task, read by another.
private final class Flag: Sendable {
    private let value = Atomic<Bool>(false)

    func set() {
        self.value.store(true, ordering: .releasing)
    }

    var isSet: Bool {
        self.value.load(ordering: .acquiring)
    }
}

private struct SlowCounters: CounterStore {
    let base: SQLiteStore
    let delay: Duration

    init(_ base: SQLiteStore, delay: Duration) {
        self.base = base
        self.delay = delay
    }

    func incrementCounter(_ name: String, by amount: Int64, expiresAt: Date?, now: Date) async throws -> Int64 {
        try await Task.sleep(for: self.delay)
        return try await self.base.incrementCounter(name, by: amount, expiresAt: expiresAt, now: now)
    }

    func incrementCounters(_ amounts: [String: Int64], expiresAt: Date?, now: Date) async throws {
        try await Task.sleep(for: self.delay)
        try await self.base.incrementCounters(amounts, expiresAt: expiresAt, now: now)
    }

    func counterValue(_ name: String, now: Date) async throws -> Int64 {
        try await Task.sleep(for: self.delay)
        return try await self.base.counterValue(name, now: now)
    }

    func counterValues(_ names: [String], now: Date) async throws -> [String: Int64] {
        try await Task.sleep(for: self.delay)
        return try await self.base.counterValues(names, now: now)
    }

    func purgeExpiredCounters(now: Date) async throws -> Int {
        try await self.base.purgeExpiredCounters(now: now)
    }
}
