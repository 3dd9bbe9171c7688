import PushgateCore
import Testing

@Suite("ArrayQueue")
struct ArrayQueueTests {
    @Test func elementsLeaveInTheOrderTheyCameAcrossCompactions() {
        var queue = ArrayQueue<Int>()
        #expect(queue.isEmpty && queue.first == nil && queue.popFirst() == nil)
        var expected = 0
        var next = 0
        // Runs of appends longer than the takes between them, so the queue never empties and compacts
        // (1,024 or more taken, at least half the array) many times.
        for round in 0..<200 {
            for _ in 0..<(40 + round % 7) { queue.append(next); next += 1 }
            for _ in 0..<(35 + round % 5) {
                #expect(queue.first == expected)
                #expect(queue.popFirst() == expected)
                expected += 1
            }
            #expect(queue.count == next - expected)
        }
        while let element = queue.popFirst() {
            #expect(element == expected)
            expected += 1
        }
        #expect(expected == next && queue.isEmpty && queue.count == 0)
    }
}
