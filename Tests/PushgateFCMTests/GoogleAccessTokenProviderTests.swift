import AsyncHTTPClient
import Foundation
import PushgateCore
@testable import PushgateFCM
import PushgateProviderSupport
import PushgateSandbox
import Testing

/// The access-token cache against the emulator's token endpoint.
@Suite("Google access tokens")
struct GoogleAccessTokenProviderTests {
    /// Runs `body` with a token provider for the emulator's service account and the given clock.
    static func withTokenProvider(
        clock: ManualClock, emulatorClock: ManualClock? = nil, _ body: @Sendable (GoogleAccessTokenProvider, FCMEmulator) async throws -> Void
    ) async throws {
        let emulatorClock = emulatorClock ?? clock
        try await EmulatedFCM.run(emulatorNow: { emulatorClock.now }) { fcm async throws in
            let account = try ServiceAccount(json: Data(contentsOf: URL(fileURLWithPath: fcm.serviceAccountPath)))
            let httpClient = HTTPClient(eventLoopGroupProvider: .singleton)
            let tokens = GoogleAccessTokenProvider(account: account, key: try account.signingKey(), httpClient: httpClient, now: { clock.now })
            do {
                try await body(tokens, fcm.emulator)
            } catch {
                try? await httpClient.shutdown()
                throw error
            }
            try await httpClient.shutdown()
        }
    }

    @Test func theServiceAccountFileDecodes() async throws {
        let emulator = try FCMEmulator()
        let account = try ServiceAccount(json: Data(emulator.serviceAccountJSON(baseURL: "http://127.0.0.1:9/").utf8))
        #expect(account.type == "service_account")
        #expect(account.projectID == "pushgate-sandbox")
        #expect(account.clientEmail == emulator.clientEmail)
        #expect(account.privateKeyID == emulator.privateKeyID)
        #expect(account.tokenURI == "http://127.0.0.1:9/token")
        #expect(account.privateKey.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        _ = try account.signingKey()
    }

    @Test func aTokenIsCachedUntilFiveMinutesBeforeExpiry() async throws {
        let clock = ManualClock()
        try await Self.withTokenProvider(clock: clock) { tokens, emulator async throws in
            let first = try await tokens.token(deadline: .now + .seconds(60))
            #expect(emulator.isValidAccessToken(first))
            #expect(try await tokens.token(deadline: .now + .seconds(60)) == first)
            // The emulator's tokens live 3599 s: still cached 3599 - 300 - 1 s later.
            clock.advance(by: 3599 - 301)
            #expect(try await tokens.token(deadline: .now + .seconds(60)) == first)
            #expect(emulator.tokenRequestCount == 1)
            clock.advance(by: 2)
            let second = try await tokens.token(deadline: .now + .seconds(60))
            #expect(second != first)
            #expect(emulator.tokenRequestCount == 2)
            #expect(tokens.fetchCount == 2)
        }
    }

    @Test func concurrentCallersShareOneRefresh() async throws {
        try await Self.withTokenProvider(clock: ManualClock()) { tokens, emulator async throws in
            let values = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<20 { group.addTask { try await tokens.token(deadline: .now + .seconds(60)) } }
                return try await group.reduce(into: Set<String>()) { $0.insert($1) }
            }
            #expect(values.count == 1)
            #expect(emulator.tokenRequestCount == 1)
        }
    }

    /// A caller whose deadline has passed starts the refresh and stops waiting at once; the refresh runs
    /// on under its own timeout, and the next caller gets its token (before, the refresh's request took the
    /// first caller's deadline and failed for everyone).
    @Test func aRefreshStartedByACallerOutOfTimeServesTheNext() async throws {
        try await Self.withTokenProvider(clock: ManualClock()) { tokens, emulator async throws in
            await #expect(throws: AccessTokenCache.TimedOut.self) { try await tokens.token(deadline: .now) }
            #expect(tokens.fetchCount == 1)
            let token = try await tokens.token(deadline: .now + .seconds(60))
            #expect(emulator.isValidAccessToken(token))
            #expect(tokens.fetchCount == 1 && emulator.tokenRequestCount == 1)
        }
    }

    @Test func invalidateForcesANewToken() async throws {
        try await Self.withTokenProvider(clock: ManualClock()) { tokens, emulator async throws in
            let first = try await tokens.token(deadline: .now + .seconds(60))
            tokens.invalidate("some other token")
            #expect(try await tokens.token(deadline: .now + .seconds(60)) == first)
            tokens.invalidate(first)
            let second = try await tokens.token(deadline: .now + .seconds(60))
            #expect(second != first)
            tokens.invalidate()
            #expect(try await tokens.token(deadline: .now + .seconds(60)) != second)
            #expect(emulator.tokenRequestCount == 3)
        }
    }

    @Test func aRefusedGrantIsAnErrorWithTheStatus() async throws {
        // A clock two hours ahead signs assertions the emulator finds issued in the future.
        let clock = ManualClock(Date().addingTimeInterval(7200))
        try await Self.withTokenProvider(clock: clock, emulatorClock: ManualClock()) { tokens, emulator async throws in
            let error = await #expect(throws: AccessTokenError.self) {
                try await tokens.token(deadline: .now + .seconds(60))
            }
            #expect(error?.status == 400)
            #expect(error?.message.contains("invalid_grant") == true)
            #expect(emulator.issuedTokenCount == 0)
        }
    }
}
