import Synchronization

/// A text made from the current second, made once a second and shared by every caller in it.
final class OncePerSecond<Text: Sendable>: Sendable {
    private let cached: Mutex<(second: Int64, text: Text?)> = Mutex((-1, nil))
    private let make: @Sendable (Int64) -> Text

    /// - Parameter make: the text of a second since 1970.
    init(_ make: @escaping @Sendable (Int64) -> Text) {
        self.make = make
    }

    /// The text of `second`, made now unless it was the last second asked for.
    func text(for second: Int64) -> Text {
        self.cached.withLock { cached in
            if cached.second == second, let text = cached.text { return text }
            let text = self.make(second)
            cached = (second, text)
            return text
        }
    }
}
