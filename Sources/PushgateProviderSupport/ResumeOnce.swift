import Synchronization

/// A continuation resumed by the first of several callers (a result and a timer racing); later calls do
/// nothing.
final class ResumeOnce<Value: Sendable, Failure: Error>: Sendable {
    private let continuation: Mutex<CheckedContinuation<Value, Failure>?>

    init(_ continuation: CheckedContinuation<Value, Failure>) {
        self.continuation = Mutex(continuation)
    }

    /// Resumes the continuation with `result`, unless a caller did already.
    func resume(with result: Result<Value, Failure>) {
        self.continuation.withLock { pending in
            pending?.resume(with: result)
            pending = nil
        }
    }
}
