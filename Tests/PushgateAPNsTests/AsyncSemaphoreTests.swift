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
        let finished = await withTaskGroup(of: Int?.self) { group in
            for index in 0..<40 {
                group.addTask {
                    await semaphore.withPermit(until: .now + .seconds(30)) {
                        gauge.enter()
                        try? await Task.sleep(for: .milliseconds(2))
                        gauge.leave()
                        return index
                    }
                }
            }
            return await group.reduce(into: [Int?]()) { $0.append($1) }
        }
        #expect(finished.compactMap { $0 }.sorted() == Array(0..<40))
        #expect(gauge.peak <= 3)
        #expect(gauge.peak >= 2)
    }

    @Test(.timeLimit(.minutes(1))) func aWaitGivesUpAtItsDeadline() async throws {
        let semaphore = AsyncSemaphore(limit: 1)
        #expect(await semaphore.acquire(until: .now + .seconds(1)))
        // The slot is never released: returning at all proves the wait gave up at its deadline.
        #expect(await semaphore.acquire(until: .now + .milliseconds(50)) == false)
        #expect(await semaphore.acquire(until: .now - .seconds(1)) == false)
        semaphore.release()
        #expect(await semaphore.acquire(until: .now + .seconds(1)))
        // A waiter gets the slot when it is released before its deadline.
        async let waiting = semaphore.acquire(until: .now + .seconds(10))
        try await Task.sleep(for: .milliseconds(20))
        semaphore.release()
        #expect(await waiting)
    }
}
