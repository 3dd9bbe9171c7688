import Synchronization

/// Bounds how much of something runs at once in async code: at most ``permits`` holders, and optionally
/// at most ``limit`` holders and waiters together. Waiters are served first come, first served; a wait
/// ends at its deadline or when its task is cancelled.
///
/// Deadlines are kept by one sweeper task per gate, which sleeps until the earliest waiter's deadline,
/// not by a timer task per waiter: a cancelled sleep keeps its memory until its deadline would have
/// come, so a timer per wait grew the heap by about a kilobyte per wait for 30 s (300 MB at 10,000 waits
/// a second).
///
/// Each delivery back end gates its provider requests with one:
///
/// - APNs: `ConcurrencyGate(permits: inflight_request_limit)`: at most that many requests in flight on
///   the HTTP/2 connections; more wait (without bound) until a request finishes or their deadline passes.
/// - FCM: `ConcurrencyGate(permits: max_connections, limit: inflight_request_limit)`: at most
///   `max_connections` requests at once (one per HTTP/1.1 connection); more wait for one until their
///   deadline, but once `inflight_request_limit` deliveries run or wait, the next is refused at once.
/// - Web Push and UnifiedPush: `ConcurrencyGate(permits: max_connections)` shared by every origin, and
///   one per origin in use with three quarters of them (`OriginRequestSlots`); more wait until their
///   deadline (or until their delivery is cancelled), but one origin has at most half of
///   `inflight_request_limit` running or waiting, and the next is refused at once. The limit bounds whole
///   deliveries (Web Push's encryption included), so the back end counts those itself.
///
/// ```swift
/// let gate = ConcurrencyGate(permits: 20, limit: 512)
/// switch await gate.enter(until: deadline) {
/// case .admitted:
///     defer { gate.leave() }
///     // send
/// case .full, .timedOut, .cancelled:
///     // give up
/// }
/// ```
public final class ConcurrencyGate: Sendable {
    /// The answer to ``enter(until:)``.
    public enum Admission: Sendable, Hashable {
        /// A permit was taken; call ``ConcurrencyGate/leave()`` when done.
        case admitted
        /// ``ConcurrencyGate/limit`` holders and waiters were already there; nothing was taken.
        case full
        /// The deadline passed before a permit was free.
        case timedOut
        /// The task was cancelled before a permit was free.
        case cancelled
    }

    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<Admission, Never>
        let deadline: ContinuousClock.Instant
    }

    private struct State {
        var holders = 0
        var nextID: UInt64 = 0
        var waiters: [Waiter] = []
        /// When the sweeper wakes next; nil when none runs.
        var sweeperWakes: ContinuousClock.Instant?
        /// Tells a sweeper it was replaced by one that wakes earlier.
        var sweeperGeneration: UInt64 = 0
    }

    /// The most holders at once.
    public let permits: Int
    /// The most holders and waiters together; nil when waiting is not bounded.
    public let limit: Int?
    private let state = Mutex(State())

    /// Creates a gate.
    /// - Parameters:
    ///   - permits: the most holders at once (at least 1).
    ///   - limit: the most holders and waiters together (raised to `permits` when lower); nil for no bound.
    public init(permits: Int, limit: Int? = nil) {
        precondition(permits > 0, "a gate needs at least one permit")
        self.permits = permits
        self.limit = limit.map { max(permits, $0) }
    }

    /// How many permits are held now.
    public var holders: Int { self.state.withLock { $0.holders } }
    /// How many tasks wait for a permit now.
    public var waiting: Int { self.state.withLock { $0.waiters.count } }

    /// Takes a permit, waiting for one until `deadline` (or until the task is cancelled).
    /// - Returns: ``Admission/admitted`` with a permit (give it back with ``leave()``); otherwise why not.
    public func enter(until deadline: ContinuousClock.Instant) async -> Admission {
        let first: (admission: Admission?, id: UInt64) = self.state.withLock { state in
            if let admission = self.admitNow(&state) { return (admission, 0) }
            state.nextID += 1
            return (nil, state.nextID)
        }
        if let admission = first.admission { return admission }
        let id = first.id
        if Task.isCancelled { return .cancelled }
        if ContinuousClock.now >= deadline { return .timedOut }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Admission, Never>) in
                let immediate: Admission? = self.state.withLock { state in
                    // A permit may have been freed since the first look.
                    if let admission = self.admitNow(&state) { return admission }
                    // Checked under the lock: a cancellation handler that ran earlier found no waiter.
                    if Task.isCancelled { return .cancelled }
                    state.waiters.append(Waiter(id: id, continuation: continuation, deadline: deadline))
                    if state.sweeperWakes.map({ deadline < $0 }) ?? true { self.startSweeper(until: deadline, &state) }
                    return nil
                }
                if let immediate {
                    continuation.resume(returning: immediate)
                }
            }
        } onCancel: {
            self.remove(id, answering: .cancelled)
        }
    }

    /// Gives a permit back, handing it to the oldest waiter if there is one.
    public func leave() {
        let waiter = self.state.withLock { state -> Waiter? in
            if state.waiters.isEmpty {
                precondition(state.holders > 0, "leave() without a permit")
                state.holders -= 1
                return nil
            }
            // The permit passes to the waiter: the number of holders does not change.
            return state.waiters.removeFirst()
        }
        guard let waiter else { return }
        waiter.continuation.resume(returning: .admitted)
    }

    /// Runs `body` holding a permit, or returns nil when none was free before `deadline` (or the gate was
    /// full, or the task was cancelled).
    public func withPermit<T: Sendable>(until deadline: ContinuousClock.Instant, _ body: () async throws -> T) async rethrows -> T? {
        guard await self.enter(until: deadline) == .admitted else { return nil }
        defer { self.leave() }
        return try await body()
    }

    /// Admits at once when a permit is free, refuses when the gate is full; nil when the caller must wait.
    private func admitNow(_ state: inout State) -> Admission? {
        if let limit = self.limit, state.holders + state.waiters.count >= limit { return .full }
        if state.holders < self.permits {
            state.holders += 1
            return .admitted
        }
        return nil
    }

    private func remove(_ id: UInt64, answering admission: Admission) {
        let waiter = self.state.withLock { state -> Waiter? in
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            return state.waiters.remove(at: index)
        }
        guard let waiter else { return }
        waiter.continuation.resume(returning: admission)
    }

    /// Starts a sweeper that wakes at `wake` (replacing one that would wake later).
    private func startSweeper(until wake: ContinuousClock.Instant, _ state: inout State) {
        state.sweeperGeneration += 1
        state.sweeperWakes = wake
        let generation = state.sweeperGeneration
        Task { await self.sweep(generation: generation, firstWake: wake) }
    }

    /// Answers `.timedOut` to every waiter whose deadline has passed, then sleeps until the next
    /// deadline; ends when nobody waits or a newer sweeper took over.
    private func sweep(generation: UInt64, firstWake: ContinuousClock.Instant) async {
        var wake = firstWake
        while true {
            try? await Task.sleep(until: wake, clock: .continuous)
            let now = ContinuousClock.now
            let (expired, next): ([Waiter], ContinuousClock.Instant?) = self.state.withLock { state in
                guard state.sweeperGeneration == generation else { return ([], nil) }
                let expired = state.waiters.filter { $0.deadline <= now }
                if !expired.isEmpty { state.waiters.removeAll { $0.deadline <= now } }
                let next = state.waiters.map(\.deadline).min()
                state.sweeperWakes = next
                return (expired, next)
            }
            for waiter in expired { waiter.continuation.resume(returning: .timedOut) }
            guard let next else { return }
            wake = next
        }
    }
}
