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
        /// The refresh under way, numbered so only its own callers store or clear it.
        var refresh: (id: Int, task: Task<Token, any Error>)?
        var serial = 0
        var fetchCount = 0

        /// The cached token's value if it is still valid at `threshold` (now plus the refresh margin).
        func freshValue(at threshold: Date) -> String? {
            guard let cached, threshold < cached.expiresAt else { return nil }
            return cached.value
        }
    }

    /// What a caller found: a token to use, or the refresh to wait for.
    private enum Lookup {
        case fresh(String)
        case refreshing((id: Int, task: Task<Token, any Error>))
    }

    private let state = Mutex(State())
    private let refreshMargin: TimeInterval
    private let now: @Sendable () -> Date

    /// Creates an empty cache.
    /// - Parameters:
    ///   - refreshMargin: how long before its expiry a token is replaced.
    ///   - now: the wall clock, injectable for tests.
    public init(refreshMargin: TimeInterval, now: @escaping @Sendable () -> Date = { Date() }) {
        self.refreshMargin = refreshMargin
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
    /// that runs `fetch`.
    /// - Throws: what `fetch` threw (every caller waiting for that refresh sees the same error).
    public func token(fetch: @escaping @Sendable () async throws -> Token) async throws -> String {
        let threshold = self.now().addingTimeInterval(self.refreshMargin)
        let lookup = self.state.withLock { state -> Lookup in
            if let fresh = state.freshValue(at: threshold) { return .fresh(fresh) }
            if let refresh = state.refresh { return .refreshing(refresh) }
            state.serial += 1
            state.fetchCount += 1
            let refresh = (id: state.serial, task: Task { try await fetch() })
            state.refresh = refresh
            return .refreshing(refresh)
        }
        let refresh: (id: Int, task: Task<Token, any Error>)
        switch lookup {
        case .fresh(let value): return value
        case .refreshing(let current): refresh = current
        }
        do {
            let token = try await refresh.task.value
            self.state.withLock { state in
                if state.refresh?.id == refresh.id {
                    state.refresh = nil
                    state.cached = token
                }
            }
            return token.value
        } catch {
            self.state.withLock { state in
                if state.refresh?.id == refresh.id { state.refresh = nil }
            }
            throw error
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
