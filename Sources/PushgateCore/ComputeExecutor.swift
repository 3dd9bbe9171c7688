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
/// Jobs start in the order they arrive. A thread that finds no job parks on a semaphore of its own and
/// says so; an enqueue that finds a parked thread hands the job to it directly and posts its semaphore
/// (one wake-up system call, and one wait on the other side), while busy threads take jobs from a queue
/// under a lock, with no system call. A condition variable cost a third call per wake-up: glibc re-takes
/// the mutex after a wait as if contended, so the next unlock always woke the mutex's (absent) waiters
/// (benchmarks/README.md, 2026-11-30, late morning). The threads live as long as the process.
public final class ComputeExecutor: TaskExecutor, @unchecked Sendable {
    /// How many threads run jobs.
    public let threadCount: Int

    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    // Guarded by `mutex`: the jobs waiting to start, while no thread is parked.
    private var jobs = ArrayQueue<UnownedJob>()
    // Guarded by `mutex`: the threads parked, the most recently parked last (its cache is the warmest).
    private var parked: [Int] = []
    // Per thread: its semaphore, and the job handed to it while parked (written under `mutex` before the
    // post, read by that thread after its wait: the semaphore orders the two).
    private let semaphores: UnsafeMutablePointer<sem_t>
    private let handed: UnsafeMutablePointer<UnownedJob?>

    /// Starts `threads` threads (at least one), named `name` (at most 15 bytes on Linux).
    /// - Parameters:
    ///   - threads: how many threads run jobs.
    ///   - name: the threads' name, as `top -H` and `perf` show it.
    public init(threads: Int, name: String = "pushgate-cpu") {
        self.threadCount = max(1, threads)
        pthread_mutex_init(self.mutex, nil)
        self.semaphores = .allocate(capacity: self.threadCount)
        self.handed = .allocate(capacity: self.threadCount)
        self.handed.initialize(repeating: nil, count: self.threadCount)
        for index in 0..<self.threadCount {
            precondition(sem_init(self.semaphores + index, 0, 0) == 0, "a compute thread needs a semaphore")
        }
        self.jobs.reserveCapacity(64)
        self.parked.reserveCapacity(self.threadCount)
        for index in 0..<self.threadCount {
            NamedThread.start(name: name) { [self] in self.runJobs(thread: index) }
        }
    }

    /// Queues `job`, or hands it to a parked thread; one of the threads runs it.
    /// - Parameter job: the job the Swift runtime hands over.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        pthread_mutex_lock(self.mutex)
        guard let thread = self.parked.popLast() else {
            self.jobs.append(job)
            pthread_mutex_unlock(self.mutex)
            return
        }
        self.handed[thread] = job
        pthread_mutex_unlock(self.mutex)
        sem_post(self.semaphores + thread)
    }

    /// A thread's life: take the oldest job and run it; when there is none, park until one is handed over.
    private func runJobs(thread: Int) -> Never {
        let executor = self.asUnownedTaskExecutor()
        while true {
            pthread_mutex_lock(self.mutex)
            if let job = self.jobs.popFirst() {
                pthread_mutex_unlock(self.mutex)
                job.runSynchronously(on: executor)
                continue
            }
            self.parked.append(thread)
            pthread_mutex_unlock(self.mutex)
            // Only an interruption by a signal ends the wait early; then wait again.
            while sem_wait(self.semaphores + thread) != 0 {
                precondition(errno == EINTR, "a compute thread cannot wait on its semaphore")
            }
            let job = self.handed[thread].take()!
            job.runSynchronously(on: executor)
        }
    }
}
