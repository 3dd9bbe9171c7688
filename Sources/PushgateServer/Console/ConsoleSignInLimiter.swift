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

    /// Whether `address` may try now.
    func allows(_ address: String) -> Bool {
        let now = ContinuousClock.now
        let capacity = self.capacity
        return self.records.withLock { records in
            var address = Self.counted(address)
            if records[address] == nil, records.count >= capacity { address = Self.overflow }
            guard let record = records[address] else { return true }
            if record.windowEnds <= now {
                records[address] = nil
                return true
            }
            return record.failures < self.limit
        }
    }

    /// What `address` is counted as: itself, or for IPv6 its first four groups (the /64).
    static func counted(_ address: String) -> String {
        guard !address.hasPrefix("::ffff:"), case .v6(let bytes)? = IPAddress(literal: address) else { return address }
        let prefix = stride(from: 0, to: 8, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
        return prefix.joined(separator: ":") + "::/64"
    }

    /// Counts a failed sign-in from `address`.
    func failed(_ address: String) {
        let now = ContinuousClock.now
        let (window, capacity) = (self.window, self.capacity)
        self.records.withLock { records in
            var address = Self.counted(address)
            if records[address] == nil, records.count >= capacity { records = records.filter { $0.value.windowEnds > now } }
            if records[address] == nil, records.count >= capacity { address = Self.overflow }
            var record = records[address].flatMap { $0.windowEnds > now ? $0 : nil } ?? Record(failures: 0, windowEnds: now + window)
            record.failures += 1
            records[address] = record
        }
    }
}
