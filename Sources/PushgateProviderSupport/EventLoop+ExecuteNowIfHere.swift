public import NIOCore

extension EventLoop {
    /// Runs `work` at once when called on this loop (a request whose task runs on its connection's loop),
    /// without a job queued behind the loop's other work; from any other thread, as `execute`.
    public func executeNowIfHere(_ work: @escaping @Sendable () -> Void) {
        if self.inEventLoop {
            work()
        } else {
            self.execute(work)
        }
    }
}
