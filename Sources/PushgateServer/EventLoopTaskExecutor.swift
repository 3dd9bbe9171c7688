import NIOCore
import NIOPosix
import PushgateCore

/// A task executor that runs jobs on one NIO event loop: a request's task that prefers it runs on its
/// connection's loop (see ``HTTPRequestDispatcher``), and an outbox lane on the loop it was given.
final class EventLoopTaskExecutor: TaskExecutor {
    /// One executor for each loop of NIO's shared group (the loops the gateway serves and delivers on),
    /// made once and shared by the server's connections and the outbox worker's lanes.
    static let sharedGroup: [EventLoopTaskExecutor] = MultiThreadedEventLoopGroup.singleton.makeIterator().map { EventLoopTaskExecutor(eventLoop: $0) }

    /// The shared executor of `eventLoop`, or a new one for a loop outside NIO's shared group (tests).
    static func executor(for eventLoop: any EventLoop) -> EventLoopTaskExecutor {
        Self.sharedGroup.first { $0.eventLoop === eventLoop } ?? EventLoopTaskExecutor(eventLoop: eventLoop)
    }

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

extension EventLoopTaskExecutor: PollExecutor {
    /// Suspends the calling task for `duration` on the loop's own timer.
    func sleep(for duration: Duration) async throws {
        let scheduled = self.eventLoop.scheduleTask(in: .nanoseconds(duration.nanosecondsClamped)) {}
        do {
            try await withTaskCancellationHandler {
                try await scheduled.futureResult.get()
            } onCancel: {
                scheduled.cancel()
            }
        } catch {
            throw CancellationError()
        }
    }
}
