import PushgateCore
import Synchronization

/// The message hashes a relay network has carried recently: Waku Relay's gossipsub drops a message whose
/// id (its 14/WAKU2-MESSAGE hash) it saw within about two minutes, so a publisher that sends the same
/// message again (a retry after a lost answer, say) does not reach the subscribers twice.
final class WakuSeenCache: Sendable {
    private struct State {
        var hashes: Set<HashedBytes> = []
        /// The hashes in the order they were first seen, with when, for expiry.
        var order: [(hash: HashedBytes, at: ContinuousClock.Instant)] = []
        var start = 0
    }

    private let window: Duration
    private let state = Mutex(State())

    init(window: Duration) {
        self.window = window
    }

    /// Records `hash`; false when it was seen within the window.
    func firstSight(of hash: [UInt8], now: ContinuousClock.Instant = .now) -> Bool {
        self.state.withLock { state in
            while state.start < state.order.count, now - state.order[state.start].at >= self.window {
                state.hashes.remove(state.order[state.start].hash)
                state.start += 1
            }
            if state.start > 1_024, state.start * 2 > state.order.count {
                state.order.removeFirst(state.start)
                state.start = 0
            }
            let key = HashedBytes(hash)
            guard state.hashes.insert(key).inserted else { return false }
            state.order.append((key, now))
            return true
        }
    }
}
