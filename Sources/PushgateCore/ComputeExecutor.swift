#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A task executor with a fixed number of threads of its own: where ``ComputePool`` runs the gateway's
/// CPU-bound steps.
///
/// Swift's shared pool has a thread per core. With the gateway's event loops beside it, a small machine
/// ran more of the gateway's threads than it has cores, and they handed work to each other through
/// wake-ups and preemptions; a pool of its own, sized by the configuration (`http.compute_threads`),
/// runs the same steps with fewer (benchmarks/README.md, 2026-11-28, evening).
///
/// Jobs start in the order they arrive. A thread that finds no job waits on a condition variable. An
/// enqueue signals only when a thread waits that no earlier signal is already waking, so while the threads
/// are busy a job costs a lock and no system call. The threads live as long as the process.
public final class ComputeExecutor: TaskExecutor, @unchecked Sendable {
    /// How many threads run jobs.
    public let threadCount: Int

    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    // Guarded by `mutex`: the jobs waiting to start.
    private var jobs = ArrayQueue<UnownedJob>()
    // Guarded by `mutex`: threads in the wait, and signals sent that no thread has woken from yet.
    private var waiting = 0
    private var signalled = 0

    /// Starts `threads` threads (at least one), named `name` (at most 15 bytes on Linux).
    /// - Parameters:
    ///   - threads: how many threads run jobs.
    ///   - name: the threads' name, as `top -H` and `perf` show it.
    public init(threads: Int, name: String = "pushgate-cpu") {
        self.threadCount = max(1, threads)
        pthread_mutex_init(self.mutex, nil)
        pthread_cond_init(self.condition, nil)
        self.jobs.reserveCapacity(64)
        for _ in 0..<self.threadCount {
            NamedThread.start(name: name) { [self] in self.runJobs() }
        }
    }

    /// Queues `job`; one of the threads runs it.
    /// - Parameter job: the job the Swift runtime hands over.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        pthread_mutex_lock(self.mutex)
        self.jobs.append(job)
        let signal = self.waiting > self.signalled
        if signal { self.signalled += 1 }
        pthread_mutex_unlock(self.mutex)
        if signal { pthread_cond_signal(self.condition) }
    }

    /// A thread's life: take the oldest job, run it, wait when there is none.
    private func runJobs() -> Never {
        let executor = self.asUnownedTaskExecutor()
        while true {
            pthread_mutex_lock(self.mutex)
            var next = self.jobs.popFirst()
            while next == nil {
                self.waiting += 1
                pthread_cond_wait(self.condition, self.mutex)
                self.waiting -= 1
                // A wake-up without a signal (spurious) also takes one off the count: at worst a later
                // enqueue then signals once more than needed.
                if self.signalled > 0 { self.signalled -= 1 }
                next = self.jobs.popFirst()
            }
            let job = next!
            pthread_mutex_unlock(self.mutex)
            job.runSynchronously(on: executor)
        }
    }
}
