import Synchronization

/// A value that a configuration reload replaces while others read it: each read returns the whole value
/// as it was at that moment, so a request that read it keeps working on what it started with.
public final class LiveValue<Value: Sendable>: Sendable {
    private let value: Mutex<Value>

    /// Creates a live value.
    public init(_ value: Value) {
        self.value = Mutex(value)
    }

    /// The value now.
    public var current: Value {
        self.value.withLock { $0 }
    }

    /// Replaces the value; readers that already read it keep the old one.
    public func replace(_ value: Value) {
        self.value.withLock { $0 = value }
    }
}
