import PushgateCore
import Synchronization

/// The request slots of a back end whose deliveries go to many independent servers (Web Push push
/// services, UnifiedPush servers): at most ``permits`` requests at once in all, and at most
/// ``permitsPerOrigin`` (three quarters of them) to any one origin, so a server that hangs holds at most
/// that share while its requests run to their deadlines, and the other servers' deliveries keep the rest.
/// Requests over an origin's share wait in that origin's own line, not in the shared one; one origin has
/// at most ``requestsPerOrigin`` requests running or waiting, and more are turned away at once
/// (``Entry/lineFull``), so a server that hangs cannot gather every delivery the back end may have in
/// flight (its `inflight_request_limit`) and leave none for the others.
///
/// An origin's line is kept while requests to it run or wait, and idle ones while there are at most
/// ``idleLinesKept`` lines in all (a Web Push app's few push services keep theirs; past that, as with
/// UnifiedPush's many servers, an idle line is dropped).
///
/// ```swift
/// let slots = OriginRequestSlots(permits: 20)
/// guard await slots.enter("https://push.example", until: deadline) == .entered else { return nil }
/// defer { slots.leave("https://push.example") }
/// ```
public final class OriginRequestSlots: Sendable {
    /// The most requests at once, all origins together.
    public var permits: Int { self.shared.permits }
    /// The most requests at once to one origin.
    public let permitsPerOrigin: Int
    /// The most requests to one origin running or waiting at once.
    public let requestsPerOrigin: Int
    /// What came of a wait for a slot.
    public enum Entry: Sendable, Hashable {
        /// Both slots were taken: call ``OriginRequestSlots/leave(_:)``.
        case entered
        /// The origin has ``OriginRequestSlots/requestsPerOrigin`` requests running or waiting already:
        /// none was taken, and the request was not made to wait.
        case lineFull
        /// The deadline passed, or the task was cancelled, before both slots were free: none is held.
        case notInTime
    }
    /// Lines kept when idle while there are no more than this many in all.
    public static let idleLinesKept = 64
    private let shared: ConcurrencyGate
    /// One origin's line: its gate, and how many requests hold or wait for it. Read and changed only under
    /// the lock of ``origins`` (a reference, so a look-up changes it in place: one hash a call).
    private final class Line {
        let gate: ConcurrencyGate
        var users = 0

        init(permits: Int) {
            self.gate = ConcurrencyGate(permits: permits)
        }
    }

    /// Each origin's line.
    private let origins = Mutex<[String: Line]>([:])

    /// Creates the slots.
    /// - Parameters:
    ///   - permits: the most requests at once (at least 1); one origin gets three quarters of them, rounded
    ///     down (at least one).
    ///   - requestsPerOrigin: the most requests to one origin running or waiting at once (at least 1; by
    ///     default twice its share of the permits).
    public init(permits: Int, requestsPerOrigin: Int? = nil) {
        self.shared = ConcurrencyGate(permits: permits)
        self.permitsPerOrigin = max(1, permits * 3 / 4)
        self.requestsPerOrigin = max(1, requestsPerOrigin ?? 2 * self.permitsPerOrigin)
    }

    /// Creates the slots of a back end that has at most `inFlightLimit` deliveries in flight (its
    /// `inflight_request_limit`): one origin has at most half of them running or waiting, or its share of
    /// the permits when that is more, up to three quarters of them, so one that hangs leaves at least a
    /// quarter to the rest and a busy one can use its share under a small limit.
    public convenience init(permits: Int, inFlightLimit: Int) {
        self.init(permits: permits, requestsPerOrigin: max(inFlightLimit / 2, min(max(1, permits * 3 / 4), inFlightLimit * 3 / 4)))
    }

    /// Waits for a slot of `origin` and one of the shared ones until `deadline`: ``Entry/entered`` when
    /// both were taken (then call ``leave(_:)``); ``Entry/lineFull`` at once when the origin's line is
    /// full; ``Entry/notInTime`` when the deadline passed or the task was cancelled first.
    public func enter(_ origin: String, until deadline: ContinuousClock.Instant) async -> Entry {
        let gate = self.origins.withLock { origins -> ConcurrencyGate? in
            let line: Line
            if let known = origins[origin] {
                guard known.users < self.requestsPerOrigin else { return nil }
                line = known
            } else {
                line = Line(permits: self.permitsPerOrigin)
                origins[origin] = line
            }
            line.users += 1
            return line.gate
        }
        guard let gate else { return .lineFull }
        guard await gate.enter(until: deadline) == .admitted else {
            self.release(origin, holding: false)
            return .notInTime
        }
        guard await self.shared.enter(until: deadline) == .admitted else {
            self.release(origin, holding: true)
            return .notInTime
        }
        return .entered
    }

    /// Gives back the slots ``enter(_:until:)`` took.
    public func leave(_ origin: String) {
        self.shared.leave()
        self.release(origin, holding: true)
    }

    /// How many origins have requests running or waiting.
    public var originsInUse: Int { self.origins.withLock { $0.values.count { $0.users > 0 } } }

    /// How many requests hold or wait for `origin`'s slots.
    public func requests(to origin: String) -> Int { self.origins.withLock { $0[origin]?.users ?? 0 } }

    /// How many origins' lines are kept (in use or idle).
    public var linesKept: Int { self.origins.withLock { $0.count } }

    private func release(_ origin: String, holding: Bool) {
        let gate = self.origins.withLock { origins -> ConcurrencyGate? in
            guard let line = origins[origin] else { return nil }
            line.users -= 1
            // An idle line is kept for the origin's next request unless there are many lines: no later
            // request can find one that was dropped, so none uses it.
            if line.users == 0, origins.count > Self.idleLinesKept { origins[origin] = nil }
            return line.gate
        }
        if holding { gate?.leave() }
    }
}
