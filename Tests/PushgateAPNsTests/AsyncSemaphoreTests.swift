@testable import PushgateAPNs
import Synchronization
import Testing

@Suite("In-flight limit")
struct AsyncSemaphoreTests {
    final class Gauge: Sendable {
        let state = Mutex((current: 0, peak: 0))
        func enter() { self.state.withLock { $0.current += 1; $0.peak = max($0.peak, $0.current) } }
        func leave() { self.state.withLock { $0.current -= 1 } }
        var peak: Int { self.state.withLock { $0.peak } }
    }

    @Test func noMoreThanTheLimitRunAtOnceAndAllFinish() async throws {
        let semaphore = AsyncSemaphore(limit: 3)
        let gauge = Gauge()
        let finished = await withTaskGroup(of: Int.self) { group in
            for index in 0..<40 {
                group.addTask {
                    await semaphore.withPermit {
                        gauge.enter()
                        try? await Task.sleep(for: .milliseconds(2))
                        gauge.leave()
                        return index
                    }
                }
            }
            return await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(finished.sorted() == Array(0..<40))
        #expect(gauge.peak <= 3)
        #expect(gauge.peak >= 2)
    }
}
