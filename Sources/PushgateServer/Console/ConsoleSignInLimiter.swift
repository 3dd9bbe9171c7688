import PushgateProviderSupport
import Synchronization

/// Failed sign-ins counted per client address: after ``limit`` failures within ``window`` an address is
/// refused until the window ends, whether its next token is right or not.
///
/// An IPv6 address counts by its /64 (one host's usual share), and once ``capacity`` addresses are being
/// counted, every further one shares a single count: an attacker with many addresses cannot fill the table
/// and then guess without any limit.
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

    /// The count every address past ``capacity`` shares.
    static let overflow = "(more addresses than the limiter holds)"

    /// Starts a sign-in from `address`: false when it may not try now; otherwise the try counts as failed
    /// at once, in the same step, until ``succeeded(_:)`` takes it back. Checked and counted together,
    /// many tries sent at once cannot all pass the check before the first of them is counted.
    func begin(_ address: String) -> Bool {
        let now = ContinuousClock.now
        let (window, capacity) = (self.window, self.capacity)
        return self.records.withLock { records in
            var key = self.key(for: address, in: records)
            if let record = records[key], record.windowEnds > now, record.failures >= self.limit { return false }
            if records[key] == nil, records.count >= capacity {
                records = records.filter { $0.value.windowEnds > now }
                key = self.key(for: address, in: records)
            }
            var record = records[key].flatMap { $0.windowEnds > now ? $0 : nil } ?? Record(failures: 0, windowEnds: now + window)
            record.failures += 1
            records[key] = record
            return true
        }
    }

    /// Takes back the try ``begin(_:)`` counted for `address`: its token was right.
    func succeeded(_ address: String) {
        self.records.withLock { records in
            let key = self.key(for: address, in: records)
            guard let failures = records[key]?.failures else { return }
            if failures <= 1 { records[key] = nil } else { records[key]?.failures = failures - 1 }
        }
    }

    /// The entry `address` counts under: its own (``counted(_:)``), or ``overflow`` when the table is full
    /// and holds none for it (called under the lock).
    private func key(for address: String, in records: [String: Record]) -> String {
        let counted = Self.counted(address)
        return records[counted] == nil && records.count >= self.capacity ? Self.overflow : counted
    }

    /// What `address` is counted as: itself, or for IPv6 its first four groups (the /64).
    static func counted(_ address: String) -> String {
        guard !address.hasPrefix("::ffff:"), case .v6(let bytes)? = IPAddress(literal: address) else { return address }
        let prefix = stride(from: 0, to: 8, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
        return prefix.joined(separator: ":") + "::/64"
    }

}
