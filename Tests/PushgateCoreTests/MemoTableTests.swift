import PushgateCore
import Synchronization
import Testing

@Suite("MemoTable")
struct MemoTableTests {
    final class Box: Sendable {
        let id: Int
        init(id: Int) { self.id = id }
    }

    final class Counter: Sendable {
        private let value = Atomic<Int>(0)
        func next() -> Int { self.value.wrappingAdd(1, ordering: .relaxed).newValue }
    }

    @Test func eachKeyGetsOneValueEvenUnderConcurrency() async {
        let table = MemoTable<String, Box>()
        let made = Counter()
        let boxes = await withTaskGroup(of: (String, ObjectIdentifier).self) { group in
            for index in 0..<400 {
                group.addTask {
                    let key = "key-\(index % 4)"
                    let box = table.value(for: key) { Box(id: made.next()) }
                    return (key, ObjectIdentifier(box))
                }
            }
            return await group.reduce(into: [String: Set<ObjectIdentifier>]()) { $0[$1.0, default: []].insert($1.1) }
        }
        #expect(boxes.count == 4)
        #expect(boxes.values.allSatisfy { $0.count == 1 })
        #expect(table.value(for: "key-0") { Box(id: -1) }.id != -1)
    }
}
