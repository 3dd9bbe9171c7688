import NIOPosix
import PushgateCore
import Synchronization

/// One connection's calls on a shared blocking thread pool: one at a time, in arrival order, and never
/// more than one of the pool's threads for them.
///
/// The pool has a thread a core, shared by the store's connections. A call that went to the pool while
/// another call of its connection was running took a second thread only to block on the connection's
/// lock, and the other connection's calls (the writer's commits, which every answer that stores
/// something waits for) queued behind both. Here a call that finds its connection busy waits in this
/// queue, and the thread that ends a call runs the next one of the same connection at once, without a
/// hop through Swift's task executor between them.
final class SQLiteCallQueue: Sendable {
    /// A waiting call: `run` runs it and resumes its caller; `fail` resumes its caller with an error.
    private struct Call: Sendable {
        let run: @Sendable () -> Void
        let fail: @Sendable (any Error) -> Void
    }

    private struct State: Sendable {
        var waiting = ArrayQueue<Call>()
        /// Whether a pool thread is running this queue's calls (or one has been asked for).
        var running = false
    }

    private let threadPool: NIOThreadPool
    private let state = Mutex(State())

    /// Creates an empty queue whose calls run on `threadPool`.
    init(threadPool: NIOThreadPool) {
        self.threadPool = threadPool
    }

    /// Runs `body` on a thread of the pool once the calls before it have ended, and returns its value.
    /// - Throws: what `body` throws; `NIOThreadPoolError.ThreadPoolInactive` when the pool no longer runs.
    func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let call = Call(
                run: { continuation.resume(with: Result { try body() }) },
                fail: { continuation.resume(throwing: $0) }
            )
            let askForThread = self.state.withLock { state in
                state.waiting.append(call)
                guard !state.running else { return false }
                state.running = true
                return true
            }
            guard askForThread else { return }
            self.threadPool.submit { workState in
                switch workState {
                case .active: self.runWaitingCalls()
                case .cancelled: self.failWaitingCalls()
                }
            }
        }
    }

    /// Runs calls until none waits (on the pool thread that was given to this queue).
    private func runWaitingCalls() {
        while let call = self.next() { call.run() }
    }

    /// Fails every waiting call: the pool was shut down before it gave this queue a thread.
    private func failWaitingCalls() {
        while let call = self.next() { call.fail(NIOThreadPoolError.ThreadPoolInactive()) }
    }

    /// The next waiting call, or nil after marking the queue idle.
    private func next() -> Call? {
        self.state.withLock { state in
            guard let call = state.waiting.popFirst() else {
                state.running = false
                return nil
            }
            return call
        }
    }
}
