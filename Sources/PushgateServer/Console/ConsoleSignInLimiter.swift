import Synchronization

/// Failed sign-ins counted per client address: after ``limit`` failures within ``window`` an address is
/// refused until the window ends, whether its next token is right or not.
final class ConsoleSignInLimiter: Sendable {
    private struct Record {
        var failures: Int
        var windowEnds: ContinuousClock.Instant
    }

    let limit: Int
    let window: Duration
    /// The most addresses remembered (expired ones are dropped first).
    let capacity: Int
    private let records = Mutex<[String: Record]>([:])

    init(limit: Int = 5, window: Duration = .seconds(300), capacity: Int = 10_000) {
        self.limit = limit
        self.window = window
        self.capacity = capacity
    }

    /// Whether `address` may try now.
    func allows(_ address: String) -> Bool {
        let now = ContinuousClock.now
        return self.records.withLock { records in
            guard let record = records[address] else { return true }
            if record.windowEnds <= now {
                records[address] = nil
                return true
            }
            return record.failures < self.limit
        }
    }

    /// Counts a failed sign-in from `address`.
    func failed(_ address: String) {
        let now = ContinuousClock.now
        let (window, capacity) = (self.window, self.capacity)
        self.records.withLock { records in
            if records.count >= capacity { records = records.filter { $0.value.windowEnds > now } }
            if records.count >= capacity { return }
            var record = records[address].flatMap { $0.windowEnds > now ? $0 : nil } ?? Record(failures: 0, windowEnds: now + window)
            record.failures += 1
            records[address] = record
        }
    }
}
