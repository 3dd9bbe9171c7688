import Crypto
import Foundation
import Logging
@testable import PushgateMatrix
import PushgateStore
import PushgateStoreSQLite
import ServiceLifecycle
import Testing

@Suite("Matrix duplicate suppression")
struct MatrixDuplicateFilterTests {
    @Test func everyDeliveredPairReachesTheStoreAndAnotherInstanceSeesIt() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("dup-\(UUID().uuidString).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let store = try await SQLiteStore.open(path: path, logger: logger)
        let services = ServiceGroup(services: [store], logger: logger)
        async let running: Void = services.run()
        let first = MatrixDuplicateFilter(store: store, window: 600)
        let keys = (0..<300).map { first.key(appID: "app", eventID: "$event\($0)", pushkey: "key") }
        #expect(await first.wasDelivered(keys[0]) == false)
        // Concurrent deliveries group their writes; when every call has returned, every pair is stored.
        await withTaskGroup(of: Void.self) { group in
            for key in keys { group.addTask { await first.recordDelivered(key) } }
        }
        let second = MatrixDuplicateFilter(store: store, window: 600)
        for key in keys {
            #expect(await second.wasDelivered(key))
            #expect(try await store.counterValue(try #require(key.text), now: Date()) == 1)
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
