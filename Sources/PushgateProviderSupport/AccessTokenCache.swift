public import Foundation
import Synchronization

/// A provider's OAuth access token, kept until shortly before it expires.
///
/// A caller that finds a fresh token takes it under a lock, without leaving its executor (the cache is not
/// an actor: a hop to an actor and back for every delivery cost two task switches). Callers that find none
/// share one refresh; a token the provider refused is dropped with ``invalidate(_:)``.
public final class AccessTokenCache: Sendable {
    /// One access token and when it stops being valid.
    public struct Token: Sendable {
        /// The bearer value.
        public let value: String
        /// When the provider stops accepting it.
        public let expiresAt: Date

        /// Creates a token.
        public init(value: String, expiresAt: Date) {
            self.value = value
            self.expiresAt = expiresAt
        }
    }

    private struct State {
        var cached: Token?
        /// The refresh under way, numbered so only its own callers store or clear it, and when it must
        /// have ended.
        var refresh: Refresh?
        var serial = 0
        var fetchCount = 0

        /// The cached token's value if it is still valid at `threshold` (now plus the refresh margin).
        func freshValue(at threshold: Date) -> String? {
            guard let cached, threshold < cached.expiresAt else { return nil }
            return cached.value
        }
    }

    /// A refresh under way.
    private struct Refresh {
        let id: Int
        let task: Task<Token, any Error>
        /// When it is given up (cancelled, and the next caller starts another).
        let givenUpAt: ContinuousClock.Instant
    }

    /// What a caller found: a token to use, or the refresh to wait for.
    private enum Lookup {
        case fresh(String)
        case refreshing(Refresh)
    }

    /// A wait for a token that ended before the token came: the caller's deadline passed, or the refresh
    /// took longer than ``fetchLimit`` (a token endpoint that answers and then stalls).
    public struct TimedOut: Error, Equatable, CustomStringConvertible {
        /// Whether the refresh itself was given up (else only this caller stopped waiting).
        public let refreshGivenUp: Bool
        /// A timeout; `refreshGivenUp` when the refresh itself was given up.
        public init(refreshGivenUp: Bool) {
            self.refreshGivenUp = refreshGivenUp
        }
        public var description: String {
            self.refreshGivenUp ? "the token endpoint did not answer in time" : "no token before the deadline"
        }
    }

    /// How long one refresh may take, by default, before it is cancelled and given up: twice the token
    /// request's own 30-s timeout, which starts only after the assertion is signed, so a refresh that the
    /// request's timeout lets finish is never cut short (a busy machine once spent over 30 s in all).
    public static let defaultFetchLimit = Duration.seconds(60)

    private let state = Mutex(State())
    private let refreshMargin: TimeInterval
    /// How long one refresh may take before it is cancelled and given up.
    public let fetchLimit: Duration
    private let now: @Sendable () -> Date

    /// Creates an empty cache.
    /// - Parameters:
    ///   - refreshMargin: how long before its expiry a token is replaced.
    ///   - fetchLimit: how long one refresh may take before it is given up.
    ///   - now: the wall clock, injectable for tests.
    public init(refreshMargin: TimeInterval, fetchLimit: Duration = AccessTokenCache.defaultFetchLimit, now: @escaping @Sendable () -> Date = { Date() }) {
        self.refreshMargin = refreshMargin
        self.fetchLimit = fetchLimit
        self.now = now
    }

    /// How many times `fetch` was started.
    public var fetchCount: Int {
        self.state.withLock { $0.fetchCount }
    }

    /// The cached token while it is fresh, without waiting: a caller that finds one needs no closure for
    /// ``token(fetch:)`` (each such closure is an allocation).
    public func freshToken() -> String? {
        let threshold = self.now().addingTimeInterval(self.refreshMargin)
        return self.state.withLock { $0.freshValue(at: threshold) }
    }

    /// The cached token while it is fresh; otherwise the result of the refresh under way, or of a new one
    /// that runs `fetch`, waited for until `deadline` at the latest.
    ///
    /// A refresh that runs past ``fetchLimit`` (however `fetch` bounds its own steps) is cancelled and
    /// given up: its waiters get ``TimedOut`` and the next caller starts another.
    /// - Throws: what `fetch` threw (every caller waiting for that refresh sees the same error), or
    ///   ``TimedOut``.
    public func token(
        until deadline: ContinuousClock.Instant? = nil, fetch: @escaping @Sendable () async throws -> Token
    ) async throws -> String {
        let threshold = self.now().addingTimeInterval(self.refreshMargin)
        let lookup = self.state.withLock { state -> Lookup in
            if let fresh = state.freshValue(at: threshold) { return .fresh(fresh) }
            if let refresh = state.refresh, refresh.givenUpAt > .now { return .refreshing(refresh) }
            state.refresh?.task.cancel()
            state.serial += 1
            state.fetchCount += 1
            let refresh = Refresh(id: state.serial, task: Task { try await fetch() }, givenUpAt: .now + self.fetchLimit)
            state.refresh = refresh
            return .refreshing(refresh)
        }
        let refresh: Refresh
        switch lookup {
        case .fresh(let value): return value
        case .refreshing(let current): refresh = current
        }
        do {
            let token: Token
            // The refresh is given up when its own limit, not the caller's deadline, ended the wait (told
            // by which came first, not by the clock after a late wake-up).
            let waitUntil = min(deadline ?? refresh.givenUpAt, refresh.givenUpAt)
            do {
                token = try await Self.value(of: refresh.task, before: waitUntil)
            } catch is TimedOut where waitUntil == refresh.givenUpAt {
                refresh.task.cancel()
                throw TimedOut(refreshGivenUp: true)
            }
            self.state.withLock { state in
                if state.refresh?.id == refresh.id {
                    state.refresh = nil
                    state.cached = token
                }
            }
            return token.value
        } catch {
            // A caller that stopped waiting leaves the refresh to the others.
            if let timedOut = error as? TimedOut, !timedOut.refreshGivenUp { throw error }
            self.state.withLock { state in
                if state.refresh?.id == refresh.id { state.refresh = nil }
            }
            throw error
        }
    }

    /// `task`'s value, or ``TimedOut`` once `deadline` passes, whichever comes first; a task that ignores
    /// cancellation is not waited for.
    static func value<Value: Sendable>(of task: Task<Value, any Error>, before deadline: ContinuousClock.Instant) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            let once = ResumeOnce(continuation)
            let timer = Task {
                // Cancelled when the value came first: then it has nothing to say.
                guard (try? await Task.sleep(until: deadline)) != nil else { return }
                once.resume(with: .failure(TimedOut(refreshGivenUp: false)))
            }
            Task {
                let result = await task.result
                // The value first, then the timer: cancelled first, the timer woke and could answer
                // TimedOut before the value (a loaded run's "no token before the deadline" with the
                // token in hand).
                once.resume(with: result)
                timer.cancel()
            }
        }
    }

    /// Forgets the cached token so the next caller fetches a new one.
    /// - Parameter token: the token that was refused; when given, the cache is only dropped if it still
    ///   holds that token (so concurrent refusals cause one refresh).
    public func invalidate(_ token: String? = nil) {
        self.state.withLock { state in
            guard let cached = state.cached else { return }
            if token == nil || token == cached.value { state.cached = nil }
        }
    }
}
