import Foundation
import NIOCore
import PushgateAPNs
import PushgateConfig
import PushgateCore
import PushgateProviderSupport
import PushgateSandbox
import Testing

/// The provider's own HTTP/2 connections: what happens when the server goes away, stays silent, or is
/// reached through a proxy.
@Suite("APNs connections")
struct APNsConnectionTests {
    static let alert = PushNotification(kind: .alert, priority: .high, payload: .object(["aps": .object(["alert": .string("Hi")])]))

    /// A provider for the emulator's app whose requests go to `port` instead.
    static func provider(_ harness: EmulatorHarness, port: Int) throws -> APNsProvider {
        try APNsProvider(
            configuration: APNsConfiguration(settings: harness.settings(["base_url": "https://127.0.0.1:\(port)"])),
            logger: TestLogging.quiet
        )
    }

    @Test func aRequestRefusedByGOAWAYIsSentAgainOnANewConnection() async throws {
        try await EmulatorHarness.withEmulator { harness in
            let server = try await ScriptedHTTP2Server(authority: harness.emulator.certificateAuthority) { connection in
                connection == 0 ? .goAway : .answer
            }
            let provider = try Self.provider(harness, port: server.port)
            #expect(await provider.deliver(Self.alert, to: deviceToken(), deadline: .soon) == .delivered)
            // Later requests use the new connection.
            #expect(await provider.deliver(Self.alert, to: deviceToken(), deadline: .soon) == .delivered)
            let record = server.record.withLock { $0 }
            #expect(record.requests == 3)
            #expect(record.connections >= 2)
            try await provider.shutdown()
            try await server.close()
        }
    }

    @Test func aServerRefusingEveryRequestGivesRetryLaterAfterOneResend() async throws {
        try await EmulatorHarness.withEmulator { harness in
            let server = try await ScriptedHTTP2Server(authority: harness.emulator.certificateAuthority) { _ in .goAway }
            let provider = try Self.provider(harness, port: server.port)
            let outcome = await provider.deliver(Self.alert, to: deviceToken(), deadline: .soon)
            guard case .retryLater = outcome else {
                Issue.record("expected retryLater, got \(outcome)")
                return
            }
            #expect(server.record.withLock { $0.requests } == 2)
            try await provider.shutdown()
            try await server.close()
        }
    }

    @Test func aSilentServerCostsNoMoreThanTheDeadlineAndTheStreamIsReset() async throws {
        try await EmulatorHarness.withEmulator { harness in
            // The provider takes turns over one connection per event loop: one answered request each opens
            // them all (TLS and all), so the silent one below meets an open connection.
            let loops = System.coreCount
            let server = try await ScriptedHTTP2Server(authority: harness.emulator.certificateAuthority) { _ in .answerFirst(loops) }
            let provider = try Self.provider(harness, port: server.port)
            for _ in 0..<loops {
                #expect(await provider.deliver(Self.alert, to: deviceToken(), deadline: .soon) == .delivered)
            }
            let started = ContinuousClock.now
            let outcome = await provider.deliver(Self.alert, to: deviceToken(), deadline: .now + .milliseconds(500))
            let elapsed = ContinuousClock.now - started
            #expect(outcome == .retryLater(after: nil, reason: "deadline passed"))
            // Far under any other timeout, with room for a machine loaded by the rest of the suite.
            #expect(elapsed >= .milliseconds(450) && elapsed < .seconds(30))
            // The RST_STREAM reaches the server (within a minute, however loaded the machine) — unless the
            // deadline passed before the request was even sent (a loaded machine), when there is no stream
            // to reset and the server never saw it.
            for _ in 0..<6000 where server.record.withLock({ $0.resets == 0 && $0.requests > loops }) {
                try await Task.sleep(for: .milliseconds(10))
            }
            let record = server.record.withLock { $0 }
            #expect(record.resets == 1 || (record.resets == 0 && record.requests == loops), "\(record)")
            try await provider.shutdown()
            try await server.close()
        }
    }

    /// A server that accepts and then says nothing (no TLS handshake, no SETTINGS) gets no PING answered
    /// either: the connection is given up after the settings timeout, and the request that waited on it,
    /// never sent, goes on a new connection: at once on another event loop's, or, on the same loop, once
    /// the backoff after that failed attempt has passed (the request meanwhile is retry later).
    @Test func aConnectionThatNeverHearsTheServersSettingsIsGivenUpAndTheRequestSentOnANewOne() async throws {
        try await EmulatorHarness.withEmulator { harness in
            let server = try await ScriptedHTTP2Server(authority: harness.emulator.certificateAuthority) { connection in
                connection == 0 ? .mute : .answer
            }
            var configuration = try APNsConfiguration(settings: harness.settings(["base_url": "https://127.0.0.1:\(server.port)"]))
            configuration.liveness.settingsTimeout = .seconds(1)
            let provider = try APNsProvider(configuration: configuration, logger: TestLogging.quiet)
            let started = ContinuousClock.now
            var outcome = await provider.deliver(Self.alert, to: deviceToken(), deadline: .now + .seconds(60))
            let elapsed = ContinuousClock.now - started
            if case .retryLater(_, let reason) = outcome {
                #expect(reason.contains("connecting again in"), "\(reason)")
                try await Task.sleep(for: .milliseconds(300))
                outcome = await provider.deliver(Self.alert, to: deviceToken(), deadline: .now + .seconds(60))
            }
            #expect(outcome == .delivered)
            // Not before the settings timeout; long before the request's own deadline.
            #expect(elapsed >= .milliseconds(900) && elapsed < .seconds(45), "\(elapsed)")
            let record = server.record.withLock { $0 }
            #expect(record.connections == 2 && record.requests == 1, "\(record)")
            for _ in 0..<3000 where server.record.withLock({ $0.mutedClosed == 0 }) {
                try await Task.sleep(for: .milliseconds(10))
            }
            #expect(server.record.withLock { $0.mutedClosed } == 1, "the silent connection is closed by the client")
            try await provider.shutdown()
            try await server.close()
        }
    }

    /// A proxy that accepts and never answers CONNECT holds the connection being made for its whole
    /// connect timeout (10 s, and as long again for the tunnel): a request waiting for it still ends at its
    /// own deadline.
    @Test func aRequestWaitingForAConnectionEndsAtItsDeadline() async throws {
        try await EmulatorHarness.withEmulator { harness in
            let mute = try await ScriptedHTTP2Server(authority: harness.emulator.certificateAuthority) { _ in .mute }
            var configuration = try APNsConfiguration(settings: harness.settings())
            configuration.proxy = OutboundProxy(url: "http://127.0.0.1:\(mute.port)")
            let provider = try APNsProvider(configuration: configuration, logger: TestLogging.quiet)
            let started = ContinuousClock.now
            let outcome = await provider.deliver(Self.alert, to: deviceToken(), deadline: .now + .milliseconds(500))
            let elapsed = ContinuousClock.now - started
            #expect(outcome == .retryLater(after: nil, reason: "deadline passed"))
            #expect(elapsed < .seconds(8), "\(elapsed)")
            try await provider.shutdown()
            try await mute.close()
        }
    }

    @Test func requestsGoThroughTheProxyTunnelWithItsCredentials() async throws {
        try await EmulatorHarness.withEmulator { harness in
            let proxy = try await ConnectProxy()
            var configuration = try APNsConfiguration(settings: harness.settings())
            let setting = OutboundProxy(url: "http://ops:s3cret@127.0.0.1:\(proxy.port)")
            #expect(setting != nil)
            configuration.proxy = setting
            let provider = try APNsProvider(configuration: configuration, logger: TestLogging.quiet)
            let outcome = await provider.deliver(Self.alert, to: deviceToken(), deadline: .soon)
            #expect(outcome == .delivered)
            #expect(harness.emulator.log.all.map(\.status) == [200])
            let heads = proxy.heads.withLock { $0 }
            #expect(heads.count == 1)
            let head = try #require(heads.first)
            #expect(head.hasPrefix("CONNECT 127.0.0.1:\(harness.port) HTTP/1.1"))
            #expect(head.contains("Proxy-Authorization: Basic \(Data("ops:s3cret".utf8).base64EncodedString())"))
            try await provider.shutdown()
            try await proxy.close()
        }
    }

    @Test func manyConcurrentRequestsShareTheConnections() async throws {
        try await EmulatorHarness.withEmulator { harness in
            try await harness.withProvider { provider in
                let outcomes = await withTaskGroup(of: DeliveryOutcome.self) { group in
                    for _ in 0..<500 {
                        group.addTask { await provider.deliver(Self.alert, to: deviceToken(), deadline: .soon) }
                    }
                    return await group.reduce(into: [DeliveryOutcome]()) { $0.append($1) }
                }
                #expect(outcomes.count == 500)
                #expect(outcomes.allSatisfy { $0 == .delivered })
                #expect(harness.emulator.log.all.count == 500)
            }
        }
    }
}
