import Synchronization

/// A value shared between event loops and the test, behind a lock.
final class LockedValue<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    init(_ value: Value) {
        self.mutex = Mutex(value)
    }

    func withLock<Result>(_ body: (inout Value) -> Result) -> Result {
        self.mutex.withLock { body(&$0) }
    }
}
