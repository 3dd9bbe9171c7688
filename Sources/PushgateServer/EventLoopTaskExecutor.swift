import NIOCore

/// A task executor that runs jobs on one NIO event loop: a request's task that prefers it runs on its
/// connection's loop (see ``HTTPRequestDispatcher``).
final class EventLoopTaskExecutor: TaskExecutor {
    /// The loop that runs the jobs.
    let eventLoop: any EventLoop

    /// An executor for `eventLoop`.
    init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        self.eventLoop.execute {
            job.runSynchronously(on: self.asUnownedTaskExecutor())
        }
    }
}
