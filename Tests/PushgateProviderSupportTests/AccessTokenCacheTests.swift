import Foundation
@testable import PushgateProviderSupport
import Synchronization
import Testing

@Suite("Access token cache")
struct AccessTokenCacheTests {
    struct Refused: Error {}

    /// A wall clock the test moves.
    final class Clock: Sendable {
        let now = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
        func advance(_ seconds: TimeInterval) { self.now.withLock { $0 += seconds } }
    }

    @Test func aTokenIsKeptUntilTheMarginBeforeItsExpiry() async throws {
        let clock = Clock()
        let cache = AccessTokenCache(refreshMargin: 300, now: { clock.now.withLock { $0 } })
        let issued = Mutex(0)
        let fetch: @Sendable () async throws -> AccessTokenCache.Token = {
            let number = issued.withLock { $0 += 1; return $0 }
            return .init(value: "token-\(number)", expiresAt: clock.now.withLock { $0 } + 3600)
        }
        #expect(cache.freshToken() == nil)
        #expect(try await cache.token(fetch: fetch) == "token-1")
        clock.advance(3299)
        #expect(cache.freshToken() == "token-1")
        #expect(try await cache.token(fetch: fetch) == "token-1")
        clock.advance(1)
        #expect(cache.freshToken() == nil, "within the margin a token is no longer fresh")
        #expect(try await cache.token(fetch: fetch) == "token-2")
        #expect(cache.freshToken() == "token-2")
        #expect(cache.fetchCount == 2)
    }

    /// A token endpoint that answers and then stalls: a caller stops waiting at its own deadline and
    /// leaves the refresh to the others; once the refresh has run for the fetch limit it is cancelled and
    /// given up, and the next caller starts another. Before, every delivery waited for it without end.
    @Test func aStalledRefreshIsWaitedForUntilTheCallersDeadlineAndGivenUpAtTheLimit() async throws {
        let cache = AccessTokenCache(refreshMargin: 300, fetchLimit: .seconds(3))
        let attempts = Mutex(0)
        let fetch: @Sendable () async throws -> AccessTokenCache.Token = {
            let attempt = attempts.withLock { $0 += 1; return $0 }
            if attempt == 1 {
                // Stalls, and does not even stop when cancelled.
                await withUnsafeContinuation { (_: UnsafeContinuation<Void, Never>) in }
            }
            return .init(value: "token-\(attempt)", expiresAt: Date() + 3600)
        }
        let started = ContinuousClock.now
        await #expect(throws: AccessTokenCache.TimedOut(refreshGivenUp: false)) {
            try await cache.token(until: .now + .milliseconds(100), fetch: fetch)
        }
        #expect(ContinuousClock.now - started < .seconds(5))
        // The refresh goes on for a caller with more time, until the limit.
        await #expect(throws: AccessTokenCache.TimedOut(refreshGivenUp: true)) {
            try await cache.token(until: .now + .seconds(20), fetch: fetch)
        }
        #expect(ContinuousClock.now - started < .seconds(8))
        #expect(cache.fetchCount == 1)
        #expect(try await cache.token(until: .now + .seconds(20), fetch: fetch) == "token-2")
        #expect(cache.fetchCount == 2)
    }

    @Test func callersWaitingOnAFailedRefreshAllSeeTheErrorAndTheNextCallerFetchesAgain() async throws {
        let cache = AccessTokenCache(refreshMargin: 300)
        let attempts = Mutex(0)
        let release = AsyncStream<Void>.makeStream()
        let failing: @Sendable () async throws -> AccessTokenCache.Token = {
            attempts.withLock { $0 += 1 }
            for await _ in release.stream { break }
            throw Refused()
        }
        let failures = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    do {
                        _ = try await cache.token(fetch: failing)
                        return false
                    } catch {
                        return error is Refused
                    }
                }
            }
            // Let every caller join the one refresh before it fails.
            while cache.fetchCount == 0 { await Task.yield() }
            try? await Task.sleep(for: .milliseconds(50))
            release.continuation.yield()
            release.continuation.finish()
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(failures == 8)
        #expect(attempts.withLock { $0 } == 1)
        let fresh = try await cache.token { .init(value: "fresh", expiresAt: Date() + 3600) }
        #expect(fresh == "fresh")
        #expect(cache.fetchCount == 2)
    }

    /// A refresh that answers long before the caller's deadline is the caller's answer, every time: the
    /// deadline's timer, stopped once the value came, never answers in its place (it did, now and then,
    /// on a loaded machine).
    @Test func aValueBeforeTheDeadlineIsNeverATimeOut() async throws {
        var timedOut = 0
        for _ in 0..<2_000 {
            let task = Task<String, any Error> { "token" }
            do {
                #expect(try await AccessTokenCache.value(of: task, before: .now + .seconds(60)) == "token")
            } catch {
                timedOut += 1
            }
        }
        #expect(timedOut == 0)
    }

    @Test func invalidateDropsOnlyTheTokenNamed() async throws {
        let cache = AccessTokenCache(refreshMargin: 300)
        let issued = Mutex(0)
        let fetch: @Sendable () async throws -> AccessTokenCache.Token = {
            let number = issued.withLock { $0 += 1; return $0 }
            return .init(value: "token-\(number)", expiresAt: Date() + 3600)
        }
        #expect(try await cache.token(fetch: fetch) == "token-1")
        cache.invalidate("token-0")
        #expect(try await cache.token(fetch: fetch) == "token-1")
        cache.invalidate("token-1")
        #expect(try await cache.token(fetch: fetch) == "token-2")
        cache.invalidate()
        #expect(try await cache.token(fetch: fetch) == "token-3")
    }
}
