import Synchronization

/// Caps how many deliveries one app has in flight, as Sygnal's `inflight_request_limit`: a delivery over
/// the cap fails at once instead of queueing, so one slow provider cannot hold every request.
final class InflightLimiter: Sendable {
    private let counts = Mutex<[String: Int]>([:])
    private let limits: [String: Int]
    private let defaultLimit: Int

    init(limits: [String: Int], defaultLimit: Int = 512) {
        self.limits = limits
        self.defaultLimit = defaultLimit
    }

    /// Takes a slot for `appID`; false when the app is at its limit.
    func acquire(_ appID: String) -> Bool {
        let limit = self.limits[appID] ?? self.defaultLimit
        return self.counts.withLock { counts in
            let current = counts[appID, default: 0]
            guard current < limit else { return false }
            counts[appID] = current + 1
            return true
        }
    }

    /// Returns a slot taken by ``acquire(_:)``.
    func release(_ appID: String) {
        self.counts.withLock { counts in
            counts[appID, default: 1] -= 1
        }
    }
}
