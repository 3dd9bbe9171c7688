import PushgateCore
import PushgateProviderSupport
import Synchronization
import Testing

@Suite("Concurrency gate")
struct ConcurrencyGateTests {
    final class Gauge: Sendable {
        let state = Mutex((current: 0, peak: 0))
        func enter() { self.state.withLock { $0.current += 1; $0.peak = max($0.peak, $0.current) } }
        func leave() { self.state.withLock { $0.current -= 1 } }
        var peak: Int { self.state.withLock { $0.peak } }
    }

    final class Order: Sendable {
        private let values = Mutex<[Int]>([])
        func append(_ value: Int) { self.values.withLock { $0.append(value) } }
        var all: [Int] { self.values.withLock { $0 } }
    }

    /// Waits (without a time limit of its own) until `condition` holds.
    static func eventually(_ condition: () -> Bool) async throws {
        while !condition() { try await Task.sleep(for: .milliseconds(1)) }
    }

    @Test func noMoreThanThePermitsRunAtOnceAndAllFinish() async throws {
        let gate = ConcurrencyGate(permits: 3)
        let gauge = Gauge()
        let finished = await withTaskGroup(of: Int?.self) { group in
            for index in 0..<40 {
                group.addTask {
                    await gate.withPermit(until: .now + .seconds(120)) {
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
        #expect(gate.holders == 0)
        #expect(gate.waiting == 0)
    }

    @Test(.timeLimit(.minutes(1))) func waitersGetPermitsInOrderAsTheyAreReleased() async throws {
        let gate = ConcurrencyGate(permits: 1)
        #expect(await gate.enter(until: .now + .seconds(60)) == .admitted)
        let order = Order()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<3 {
                group.addTask {
                    #expect(await gate.enter(until: .now + .seconds(60)) == .admitted)
                    order.append(index)
                    gate.leave()
                }
                // Let each waiter queue before the next one.
                try await Self.eventually { gate.waiting == index + 1 }
            }
            #expect(order.all.isEmpty)
            gate.leave()
            try await group.waitForAll()
        }
        #expect(order.all == [0, 1, 2])
        #expect(gate.holders == 0)
    }

    @Test(.timeLimit(.minutes(1))) func aWaitGivesUpAtItsDeadline() async throws {
        let gate = ConcurrencyGate(permits: 1)
        #expect(await gate.enter(until: .now + .seconds(1)) == .admitted)
        // The permit is never given back: returning at all proves the wait gave up at its deadline.
        #expect(await gate.enter(until: .now + .milliseconds(50)) == .timedOut)
        #expect(await gate.enter(until: .now - .seconds(1)) == .timedOut)
        #expect(gate.waiting == 0)
        gate.leave()
        // A free permit is taken even when the deadline has passed: only waiting is bounded by it.
        #expect(await gate.enter(until: .now - .seconds(1)) == .admitted)
        // A waiter gets the permit when it is given back before its deadline.
        async let waiting = gate.enter(until: .now + .seconds(30))
        try await Self.eventually { gate.waiting == 1 }
        gate.leave()
        #expect(await waiting == .admitted)
        #expect(gate.holders == 1)
    }

    @Test(.timeLimit(.minutes(1))) func beyondTheLimitDeliveriesAreRefusedAtOnce() async throws {
        let gate = ConcurrencyGate(permits: 1, limit: 2)
        #expect(gate.limit == 2)
        #expect(await gate.enter(until: .now + .seconds(30)) == .admitted)
        async let second = gate.enter(until: .now + .seconds(30))
        try await Self.eventually { gate.waiting == 1 }
        // One holds and one waits: the limit of two is reached.
        #expect(await gate.enter(until: .now + .seconds(30)) == .full)
        gate.leave()
        #expect(await second == .admitted)
        gate.leave()
        #expect(gate.holders == 0)
        // A limit below the permits is raised to them.
        #expect(ConcurrencyGate(permits: 4, limit: 1).limit == 4)
        #expect(ConcurrencyGate(permits: 4).limit == nil)
    }

    @Test(.timeLimit(.minutes(1))) func cancelledWaitersGiveUpAndLeaveThePermitToOthers() async throws {
        let gate = ConcurrencyGate(permits: 1)
        #expect(await gate.enter(until: .now + .seconds(30)) == .admitted)
        let waiter = Task { await gate.enter(until: .now + .seconds(30)) }
        try await Self.eventually { gate.waiting == 1 }
        waiter.cancel()
        #expect(await waiter.value == .cancelled)
        #expect(gate.waiting == 0)
        gate.leave()
        // The permit was not consumed by the cancelled waiter.
        #expect(gate.holders == 0)
        #expect(await gate.enter(until: .now + .seconds(1)) == .admitted)
        gate.leave()
    }

    @Test(.timeLimit(.minutes(1))) func alreadyCancelledTasksDoNotWait() async throws {
        let gate = ConcurrencyGate(permits: 1)
        #expect(await gate.enter(until: .now + .seconds(30)) == .admitted)
        let waiter = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await gate.enter(until: .now + .seconds(30))
        }
        #expect(await waiter.value == .cancelled)
        #expect(gate.waiting == 0)
        gate.leave()
    }
}
