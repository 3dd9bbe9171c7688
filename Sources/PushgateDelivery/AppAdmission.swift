import Synchronization

/// Caps how many deliveries one app has in flight, as Sygnal's `inflight_request_limit`: a delivery over
/// the cap fails at once instead of queueing, so one slow provider cannot hold every request.
final class InflightLimiter: Sendable {
    /// One app's deliveries in flight and its cap.
    private struct Slot {
        var count = 0
        let limit: Int
    }

    private let slots = Mutex<[String: Slot]>([:])
    private let limits: [String: Int]
    private let defaultLimit: Int

    init(limits: [String: Int], defaultLimit: Int = 512) {
        self.limits = limits
        self.defaultLimit = defaultLimit
    }

    /// Takes a slot for `appID`; false when the app is at its limit.
    func acquire(_ appID: String) -> Bool {
        self.slots.withLock { slots in
            // One lookup, through the subscript's in-place access; the limit is looked up the first time.
            Self.take(&slots[appID, default: Slot(limit: self.limits[appID] ?? self.defaultLimit)])
        }
    }

    /// Returns a slot taken by ``acquire(_:)``.
    func release(_ appID: String) {
        self.slots.withLock { slots in
            slots[appID]?.count -= 1
        }
    }

    private static func take(_ slot: inout Slot) -> Bool {
        guard slot.count < slot.limit else { return false }
        slot.count += 1
        return true
    }
}
