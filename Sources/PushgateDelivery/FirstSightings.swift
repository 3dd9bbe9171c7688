import Synchronization

/// The keys seen so far, so that something is done (a log line) the first time each is seen only.
final class FirstSightings: Sendable {
    private let seen = Mutex<Set<String>>([])

    /// Whether `key` is seen here for the first time (and from now on counts as seen).
    func isFirst(_ key: String) -> Bool {
        self.seen.withLock { $0.insert(key).inserted }
    }
}
