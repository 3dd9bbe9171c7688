import Foundation
import PushgateStore
import Synchronization

/// Remembers which `(event_id, pushkey)` pairs were delivered in the last ``window`` so a repeated notify
/// (a homeserver retrying after a timeout or a 502) is sent once.
///
/// The memory is the store's counters, shared by every instance on it. Writes are group-committed: a
/// delivered pair joins a pending list, and whichever request finds no write under way writes the whole
/// list in one transaction, so a burst of deliveries costs a few store commits instead of one each. Pairs
/// this instance delivered are also kept in memory until their window ends, so its own repeats never wait
/// for the store.
final class MatrixDuplicateFilter: Sendable {
    private struct State {
        var recent: [String: Date] = [:]
        var pending: [String] = []
        var writing = false
    }

    /// How long a delivered pair is remembered.
    let window: TimeInterval
    private let store: any CounterStore
    private let state = Mutex(State())
    private let memoryLimit: Int

    init(store: any CounterStore, window: TimeInterval, memoryLimit: Int = 100_000) {
        self.store = store
        self.window = window
        self.memoryLimit = memoryLimit
    }

    /// Whether `key` was delivered within the window, by this instance or another; a store that cannot
    /// answer counts as "not delivered", so a notification is never lost to a store outage.
    func wasDelivered(_ key: String, now: Date = Date()) async -> Bool {
        let remembered = self.state.withLock { state in state.recent[key].map { $0 > now } ?? false }
        if remembered { return true }
        return ((try? await self.store.counterValue(key, now: now)) ?? 0) > 0
    }

    /// Records that `key` was delivered; returns once it is in memory, and (for the request that writes
    /// the group) once the group is in the store.
    func recordDelivered(_ key: String, now: Date = Date()) async {
        let expiry = now.addingTimeInterval(self.window)
        let mustWrite = self.state.withLock { state -> Bool in
            if state.recent.count >= self.memoryLimit { state.recent = state.recent.filter { $0.value > now } }
            if state.recent.count < self.memoryLimit { state.recent[key] = expiry }
            state.pending.append(key)
            if state.writing { return false }
            state.writing = true
            return true
        }
        guard mustWrite else { return }
        while true {
            let group = self.state.withLock { state -> [String] in
                let group = state.pending
                state.pending.removeAll(keepingCapacity: true)
                if group.isEmpty { state.writing = false }
                return group
            }
            if group.isEmpty { return }
            try? await self.store.incrementCounters(group, by: 1, expiresAt: expiry, now: now)
        }
    }
}
