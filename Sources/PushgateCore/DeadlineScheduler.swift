import Synchronization

/// Runs actions at deadlines with one sleeping task for all of them, for deadlines that are mostly
/// cancelled long before they come (a store call's timeout, say).
///
/// A timer task per deadline costs its memory until the deadline even when cancelled at once (a
/// cancelled sleep is released when it would have ended), so thousands of short calls a second with a
/// deadline seconds away hold megabytes. Here cancelling removes an entry from a table, and one sweeper
/// wakes at the earliest deadline, runs what is due and sleeps until the next.
public final class DeadlineScheduler: Sendable {
    /// The scheduler the gateway's deadlines share.
    public static let shared = DeadlineScheduler()

    /// Identifies a scheduled action, to cancel it.
    public struct Token: Hashable, Sendable {
        fileprivate let id: UInt64
    }

    private struct Entry {
        let deadline: ContinuousClock.Instant
        let action: @Sendable () -> Void
    }

    private struct State {
        var entries: [UInt64: Entry] = [:]
        var nextID: UInt64 = 0
        var sweeperWakes: ContinuousClock.Instant?
        var generation: UInt64 = 0
    }

    private let state = Mutex(State())

    /// Creates a scheduler (most code uses ``shared``).
    public init() {}

    /// Runs `action` at `deadline` unless cancelled first.
    @discardableResult
    public func schedule(at deadline: ContinuousClock.Instant, _ action: @escaping @Sendable () -> Void) -> Token {
        let (token, start) = self.state.withLock { state -> (Token, (UInt64, ContinuousClock.Instant)?) in
            state.nextID += 1
            state.entries[state.nextID] = Entry(deadline: deadline, action: action)
            guard state.sweeperWakes.map({ deadline < $0 }) ?? true else { return (Token(id: state.nextID), nil) }
            state.generation += 1
            state.sweeperWakes = deadline
            return (Token(id: state.nextID), (state.generation, deadline))
        }
        if let (generation, wake) = start { Task { await self.sweep(generation: generation, firstWake: wake) } }
        return token
    }

    /// Cancels a scheduled action; nothing happens if it ran already.
    public func cancel(_ token: Token) {
        _ = self.state.withLock { $0.entries.removeValue(forKey: token.id) }
    }

    /// How many actions wait (tests and diagnostics).
    public var pending: Int { self.state.withLock { $0.entries.count } }

    private func sweep(generation: UInt64, firstWake: ContinuousClock.Instant) async {
        var wake = firstWake
        while true {
            try? await Task.sleep(until: wake, clock: .continuous)
            let now = ContinuousClock.now
            let (due, next) = self.state.withLock { state -> ([Entry], ContinuousClock.Instant?) in
                guard state.generation == generation else { return ([], nil) }
                var due: [Entry] = []
                var next: ContinuousClock.Instant?
                for (id, entry) in state.entries {
                    if entry.deadline <= now {
                        due.append(entry)
                        state.entries.removeValue(forKey: id)
                    } else if next.map({ entry.deadline < $0 }) ?? true {
                        next = entry.deadline
                    }
                }
                state.sweeperWakes = next
                return (due, next)
            }
            for entry in due.sorted(by: { $0.deadline < $1.deadline }) { entry.action() }
            guard let next else { return }
            wake = next
        }
    }
}
