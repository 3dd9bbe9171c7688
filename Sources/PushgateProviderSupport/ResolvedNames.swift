import Synchronization

/// Host names' resolved addresses, each until its expiry; a full table is emptied before a new name goes in.
final class ResolvedNames: Sendable {
    private struct Entry {
        var addresses: [IPAddress]
        var expires: ContinuousClock.Instant
    }

    private let entries = Mutex<[String: Entry]>([:])

    /// The addresses of `name`, if resolved and not expired.
    func addresses(of name: String, now: ContinuousClock.Instant = .now) -> [IPAddress]? {
        self.entries.withLock { entries in
            guard let entry = entries[name] else { return nil }
            guard entry.expires > now else {
                entries[name] = nil
                return nil
            }
            return entry.addresses
        }
    }

    /// Remembers `addresses` for `name` for `lifetime`.
    func remember(_ addresses: [IPAddress], of name: String, for lifetime: Duration, limit: Int, now: ContinuousClock.Instant = .now) {
        self.entries.withLock { entries in
            if entries.count >= limit, entries[name] == nil { entries.removeAll(keepingCapacity: true) }
            entries[name] = Entry(addresses: addresses, expires: now + lifetime)
        }
    }
}
