@testable import PushgateWebPush
import Synchronization
import Testing

@Suite("Async semaphore")
struct AsyncSemaphoreTests {
    final class Order: Sendable {
        private let values = Mutex<[Int]>([])
        func append(_ value: Int) { self.values.withLock { $0.append(value) } }
        var all: [Int] { self.values.withLock { $0 } }
    }

    @Test func waitersGetPermitsInOrderAsTheyAreReleased() async throws {
        let semaphore = AsyncSemaphore(permits: 1)
        try await semaphore.acquire()
        let order = Order()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<3 {
                group.addTask {
                    try await semaphore.acquire()
                    order.append(index)
                    semaphore.release()
                }
                // Let each waiter queue before the next one.
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(order.all.isEmpty)
            semaphore.release()
            try await group.waitForAll()
        }
        #expect(order.all == [0, 1, 2])
    }

    @Test func cancelledWaitersGiveUpAndLeaveThePermitToOthers() async throws {
        let semaphore = AsyncSemaphore(permits: 1)
        try await semaphore.acquire()
        let waiter = Task { try await semaphore.acquire() }
        try await Task.sleep(for: .milliseconds(50))
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        semaphore.release()
        // The permit was not consumed by the cancelled waiter.
        try await semaphore.acquire()
        semaphore.release()
    }

    @Test func alreadyCancelledTasksDoNotWait() async throws {
        let semaphore = AsyncSemaphore(permits: 1)
        try await semaphore.acquire()
        let waiter = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await semaphore.acquire()
        }
        await #expect(throws: CancellationError.self) { try await waiter.value }
    }
}
