#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import PushgateCore
import Synchronization
import Testing

@Suite("Compute executor")
struct ComputeExecutorTests {
    /// What the jobs of a test record, shared between them.
    final class Probe: Sendable {
        let ran = Atomic<Int>(0)
        let running = Atomic<Int>(0)
        let overlapped = Atomic<Bool>(false)
        let gate = Atomic<Bool>(false)
        let order = Mutex<[Int]>([])
    }

    /// The system's name of the thread that calls this.
    static func currentThreadName() -> String {
        #if os(Linux)
        let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
        return name.trimmingCharacters(in: .newlines)
        #else
        return Thread.current.name ?? ""
        #endif
    }

    @Test(.timeLimit(.minutes(1))) func workPreferringTheExecutorRunsOnItsOwnNamedThreads() async {
        let executor = ComputeExecutor(threads: 2, name: "cx-test-named")
        #expect(executor.threadCount == 2)
        let names = await withTaskExecutorPreference(executor) { () async -> Set<String> in
            await withTaskGroup(of: String.self) { group in
                for _ in 0..<32 { group.addTask { Self.currentThreadName() } }
                var names = Set<String>()
                for await name in group { names.insert(name) }
                return names
            }
        }
        #expect(names == ["cx-test-named"])
        #expect(ComputeExecutor(threads: 0, name: "cx-test-min").threadCount == 1)
    }

    @Test(.timeLimit(.minutes(1))) func everyJobRunsWhenTasksArriveWhileThreadsWaitOrWork() async {
        // 16 tasks hop onto a two-thread executor 300 times each, some right after another, some after
        // the threads have had time to go back to waiting: a lost wake-up would leave a task hanging.
        let executor = ComputeExecutor(threads: 2, name: "cx-test-hops")
        let probe = Probe()
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<16 {
                group.addTask {
                    for hop in 0..<300 {
                        _ = await withTaskExecutorPreference(executor) {
                            probe.ran.add(1, ordering: .relaxed)
                        }
                        if (hop + task) % 50 == 0 { try? await Task.sleep(for: .milliseconds(2)) }
                    }
                }
            }
        }
        #expect(probe.ran.load(ordering: .relaxed) == 16 * 300)
    }

    @Test(.timeLimit(.minutes(1))) func jobsHandedToParkedThreadsRunAtTheSameTime() async {
        // Both threads are parked; the first job waits until the second has run. Handed to the same
        // thread, or left in the queue behind the first, the second would never run.
        let executor = ComputeExecutor(threads: 2, name: "cx-test-park")
        for _ in 0..<50 {
            let probe = Probe()
            try? await Task.sleep(for: .milliseconds(2))
            let first = Task(executorPreference: executor) {
                while !probe.gate.load(ordering: .acquiring) { sched_yield() }
            }
            let second = Task(executorPreference: executor) { probe.gate.store(true, ordering: .releasing) }
            await first.value
            await second.value
        }
    }

    @Test(.timeLimit(.minutes(1))) func oneThreadRunsJobsOneAtATimeInTheOrderTheyArrive() async {
        let executor = ComputeExecutor(threads: 1, name: "cx-test-order")
        let probe = Probe()
        // The first job holds the thread while the others queue behind it, in the order they are made.
        let first = Task(executorPreference: executor) {
            while !probe.gate.load(ordering: .acquiring) { sched_yield() }
            probe.order.withLock { $0.append(0) }
        }
        var others: [Task<Void, Never>] = []
        for index in 1...20 {
            others.append(Task(executorPreference: executor) {
                if probe.running.add(1, ordering: .relaxed).newValue > 1 { probe.overlapped.store(true, ordering: .relaxed) }
                probe.order.withLock { $0.append(index) }
                probe.running.subtract(1, ordering: .relaxed)
            })
            // Each task is enqueued before the next one is made.
            try? await Task.sleep(for: .milliseconds(1))
        }
        probe.gate.store(true, ordering: .releasing)
        await first.value
        for task in others { await task.value }
        #expect(probe.order.withLock { $0 } == Array(0...20))
        let didOverlap = probe.overlapped.load(ordering: .relaxed)
        #expect(!didOverlap)
    }

    @Test(.timeLimit(.minutes(1))) func aLongQueueRunsEveryJobInOrderWhileItsTakenSlotsAreGivenBack() async {
        // 3,000 jobs wait behind one that holds the only thread: the queue is taken from while it is still
        // long, which gives back the slots of the jobs taken (at 1,024 and more, half the queue).
        let executor = ComputeExecutor(threads: 1, name: "cx-test-long")
        let probe = Probe()
        let first = Task(executorPreference: executor) {
            while !probe.gate.load(ordering: .acquiring) { sched_yield() }
        }
        var others: [Task<Void, Never>] = []
        for index in 1...3_000 {
            // A task made with an executor preference is enqueued on that executor as it is made.
            others.append(Task(executorPreference: executor) { probe.order.withLock { $0.append(index) } })
        }
        probe.gate.store(true, ordering: .releasing)
        await first.value
        for task in others { await task.value }
        #expect(probe.order.withLock { $0 } == Array(1...3_000))
    }

    @Test(.timeLimit(.minutes(1))) func computePoolRunsStepsOnTheComputeThreadsAndHandsBackResultsAndErrors() async {
        struct Refused: Error, Equatable {}
        let name = await ComputePool.run { () -> String in Self.currentThreadName() }
        #expect(name == "pushgate-cpu")
        #expect(ComputePool.executor.threadCount >= 1)
        let failure: Refused? = await {
            do throws(Refused) {
                _ = try await ComputePool.run { () throws(Refused) -> Int in throw Refused() }
                return nil
            } catch {
                return error
            }
        }()
        #expect(failure == Refused())
        #expect(await ComputePool.run { () async -> Int in 41 + 1 } == 42)
    }
}
