public import PushgateCore
import Synchronization

/// The request slots of a back end whose deliveries go to many independent servers (Web Push push
/// services, UnifiedPush servers): at most ``permits`` requests at once in all, and at most
/// ``permitsPerOrigin`` (three quarters of them) to any one origin, so a server that hangs holds at most
/// that share while its requests run to their deadlines, and the other servers' deliveries keep the rest.
/// Requests over an origin's share wait in that origin's own line, not in the shared one.
///
/// An origin's line exists while requests to it run or wait: only origins in use are remembered.
///
/// ```swift
/// let slots = OriginRequestSlots(permits: 20)
/// guard await slots.enter("https://push.example", until: deadline) else { return nil }
/// defer { slots.leave("https://push.example") }
/// ```
public final class OriginRequestSlots: Sendable {
    /// The most requests at once, all origins together.
    public var permits: Int { self.shared.permits }
    /// The most requests at once to one origin.
    public let permitsPerOrigin: Int
    private let shared: ConcurrencyGate
    /// Each origin in use: its own gate, and how many requests hold or wait for it.
    private let origins = Mutex<[String: (gate: ConcurrencyGate, users: Int)]>([:])

    /// Creates the slots.
    /// - Parameter permits: the most requests at once (at least 1); one origin gets three quarters of
    ///   them, rounded down (at least one).
    public init(permits: Int) {
        self.shared = ConcurrencyGate(permits: permits)
        self.permitsPerOrigin = max(1, permits * 3 / 4)
    }

    /// Waits for a slot of `origin` and one of the shared ones until `deadline`; true when both were
    /// taken (then call ``leave(_:)``), false when the deadline passed or the task was cancelled first.
    public func enter(_ origin: String, until deadline: ContinuousClock.Instant) async -> Bool {
        let gate = self.origins.withLock { origins in
            var line = origins[origin] ?? (ConcurrencyGate(permits: self.permitsPerOrigin), 0)
            line.users += 1
            origins[origin] = line
            return line.gate
        }
        guard await gate.enter(until: deadline) == .admitted else {
            self.release(origin, holding: false)
            return false
        }
        guard await self.shared.enter(until: deadline) == .admitted else {
            self.release(origin, holding: true)
            return false
        }
        return true
    }

    /// Gives back the slots ``enter(_:until:)`` took.
    public func leave(_ origin: String) {
        self.shared.leave()
        self.release(origin, holding: true)
    }

    /// How many origins have requests running or waiting.
    public var originsInUse: Int { self.origins.withLock { $0.count } }

    private func release(_ origin: String, holding: Bool) {
        let gate = self.origins.withLock { origins -> ConcurrencyGate? in
            guard var line = origins[origin] else { return nil }
            line.users -= 1
            if line.users == 0 {
                origins[origin] = nil
            } else {
                origins[origin] = line
            }
            return line.gate
        }
        if holding { gate?.leave() }
    }
}
