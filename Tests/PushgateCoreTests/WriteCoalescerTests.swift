import PushgateCore
import Synchronization
import Testing

/// Concurrent submissions share writes up to the weight limit, each caller gets its own answer, and a
/// failed write fails exactly the callers whose items it carried.
@Suite("Write coalescer")
struct WriteCoalescerTests {
    struct Refused: Error {}

    /// Records each write's items; refuses a write that carries a negative item.
    final class Recorder: Sendable {
        let writes = Mutex<[[Int]]>([])

        func write(_ items: [Int]) async throws -> [String] {
            self.writes.withLock { $0.append(items) }
            if items.contains(where: { $0 < 0 }) { throw Refused() }
            return items.map { "answer \($0)" }
        }
    }

    @Test func callersShareWritesWithinTheWeightLimitAndGetTheirOwnAnswers() async throws {
        let recorder = Recorder()
        let coalescer = WriteCoalescer<Int, String>(maximumWeight: 10) { try await recorder.write($0) }
        let answers = try await withThrowingTaskGroup(of: (Int, String).self) { group in
            for item in 0..<200 { group.addTask { (item, try await coalescer.submit(item, weight: item % 3 + 1)) } }
            return try await group.reduce(into: [Int: String]()) { $0[$1.0] = $1.1 }
        }
        #expect(answers.count == 200)
        #expect(answers.allSatisfy { $0.value == "answer \($0.key)" })
        let writes = recorder.writes.withLock { $0 }
        #expect(writes.flatMap { $0 }.sorted() == Array(0..<200), "each item written once")
        #expect(writes.allSatisfy { write in write.count == 1 || write.reduce(0) { $0 + $1 % 3 + 1 } <= 10 })
        // An item heavier than the limit still goes, alone.
        #expect(try await coalescer.submit(7, weight: 50) == "answer 7")
        #expect(recorder.writes.withLock { $0.last } == [7])
    }

    @Test func aFailedWriteFailsOnlyTheCallersItCarried() async throws {
        let recorder = Recorder()
        let coalescer = WriteCoalescer<Int, String>(maximumWeight: 1) { try await recorder.write($0) }
        await #expect(throws: Refused.self) { try await coalescer.submit(-1) }
        #expect(try await coalescer.submit(2) == "answer 2")
        // A write that answers the wrong number of items fails its callers instead of leaving them waiting.
        let short = WriteCoalescer<Int, String>(maximumWeight: 5) { _ in [] }
        await #expect(throws: WriteCoalescer<Int, String>.AnswerCountMismatch.self) { try await short.submit(1) }
    }
}
