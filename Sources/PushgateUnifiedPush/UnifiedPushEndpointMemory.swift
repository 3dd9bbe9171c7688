import Synchronization

/// What the UnifiedPush back end remembers of the endpoints and hosts it posted to, so a homeserver (or the
/// outbox) trying again cannot make the gateway hammer them, as the common-proxies gateway remembers them:
/// an endpoint found gone for ``goneLifetime`` (its deliveries are then answered invalid token without a
/// request), and an endpoint or host failing for a while (its deliveries are answered retry later, for
/// ``unavailableLifetime`` or the `Retry-After` the push server gave).
///
/// At most ``capacity`` entries: a full table first drops what expired, and is emptied when nothing had.
final class UnifiedPushEndpointMemory: Sendable {
    /// How long an endpoint found gone (or a host that does not exist) is remembered.
    static let goneLifetime: Duration = .seconds(600)
    /// How long a failing endpoint or host is left alone when it did not say.
    static let unavailableLifetime: Duration = .seconds(60)
    /// The longest a `Retry-After` is honoured for.
    static let longestPause: Duration = .seconds(3600)
    /// The most entries.
    static let capacity = 10_000

    /// What is remembered of an endpoint or host.
    enum Recollection: Equatable {
        /// Gone: deliveries to it are invalid tokens.
        case gone
        /// Failing: try again after this long.
        case unavailable(remaining: Duration)
    }

    /// A remembered endpoint (its URL as the pushkey gives it) or host (`scheme://host[:port]`).
    enum Key: Hashable {
        case endpoint(String)
        case host(String)
    }

    private struct Entry {
        var gone: Bool
        var until: ContinuousClock.Instant
    }

    private let entries = Mutex<[Key: Entry]>([:])
    private let capacity: Int

    init(capacity: Int = UnifiedPushEndpointMemory.capacity) {
        self.capacity = capacity
    }

    /// What is remembered of `endpoint` or its `host` (the host first, as its entry covers every endpoint
    /// on it); nil when nothing is, or it expired.
    func recall(endpoint: String, host: String, now: ContinuousClock.Instant = .now) -> Recollection? {
        self.entries.withLock { entries in
            for key in [Key.host(host), Key.endpoint(endpoint)] {
                guard let entry = entries[key] else { continue }
                guard entry.until > now else {
                    entries[key] = nil
                    continue
                }
                return entry.gone ? .gone : .unavailable(remaining: entry.until - now)
            }
            return nil
        }
    }

    /// Remembers `key` as gone for ``goneLifetime``.
    func rememberGone(_ key: Key, now: ContinuousClock.Instant = .now) {
        self.remember(key, Entry(gone: true, until: now + Self.goneLifetime), now: now)
    }

    /// Remembers `key` as failing for `pause` (the push server's `Retry-After`, at most ``longestPause``),
    /// else for ``unavailableLifetime``.
    func rememberUnavailable(_ key: Key, pause: Duration?, now: ContinuousClock.Instant = .now) {
        let lifetime = pause.map { min(max($0, .seconds(1)), Self.longestPause) } ?? Self.unavailableLifetime
        self.remember(key, Entry(gone: false, until: now + lifetime), now: now)
    }

    /// Forgets `key` (an endpoint that answered again).
    func forget(_ key: Key) {
        self.entries.withLock { entries in
            guard !entries.isEmpty else { return }
            entries[key] = nil
        }
    }

    /// How many entries are kept now (expired ones included until they are dropped).
    var count: Int { self.entries.withLock { $0.count } }

    private func remember(_ key: Key, _ entry: Entry, now: ContinuousClock.Instant) {
        self.entries.withLock { entries in
            if entries.count >= self.capacity, entries[key] == nil {
                entries = entries.filter { $0.value.until > now }
                if entries.count >= self.capacity { entries.removeAll(keepingCapacity: true) }
            }
            entries[key] = entry
        }
    }
}
