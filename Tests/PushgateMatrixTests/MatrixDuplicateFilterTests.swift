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
        let keys = (0..<300).map { MatrixDuplicateFilter.Key("matrix:dup:app:$event\($0):key") }
        #expect(await first.wasDelivered(keys[0]) == false)
        // Concurrent deliveries group their writes; when every call has returned, every pair is stored.
        await withTaskGroup(of: Void.self) { group in
            for key in keys { group.addTask { await first.recordDelivered(key) } }
        }
        let second = MatrixDuplicateFilter(store: store, window: 600)
        for key in keys {
            #expect(await second.wasDelivered(key))
            #expect(try await store.counterValue(key.text, now: Date()) == 1)
        }
        #expect(await second.wasDelivered(.init("matrix:dup:app:$other:key")) == false)
        // Concurrent questions are grouped and each gets its own answer.
        let third = MatrixDuplicateFilter(store: store, window: 600)
        let answers = await withTaskGroup(of: (Int, Bool).self) { group in
            for index in 0..<400 {
                group.addTask { (index, await third.wasDelivered(index < 300 ? keys[index] : .init("matrix:dup:app:$new\(index):key"))) }
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

    @Test func withoutASharedStoreTheMemoryAloneAnswers() async {
        let filter = MatrixDuplicateFilter(store: nil, window: 600, memoryLimit: 3)
        #expect(await filter.wasDelivered(.init("a")) == false)
        await filter.recordDelivered(.init("a"))
        #expect(await filter.wasDelivered(.init("a")))
        #expect(await filter.wasDelivered(.init("a"), now: Date().addingTimeInterval(601)) == false)
        // A full memory takes no more pairs until expired ones are swept.
        for key in ["b", "c", "d"] { await filter.recordDelivered(.init(key)) }
        #expect(await filter.wasDelivered(.init("c")))
        #expect(await filter.wasDelivered(.init("d")) == false)
        await filter.recordDelivered(.init("e"), now: Date().addingTimeInterval(601))
        #expect(await filter.wasDelivered(.init("e"), now: Date().addingTimeInterval(602)))
    }
}
