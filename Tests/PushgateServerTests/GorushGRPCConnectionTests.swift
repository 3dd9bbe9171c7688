import Foundation
import Logging
import NIOCore
import NIOPosix
@testable import PushgateGorush
import PushgateHTTP
import PushgateTestSupport
import ServiceLifecycle
import Synchronization
import Testing

/// gorush's gRPC listener against clients that connect and then say nothing, or never answer the server:
/// their connections are closed, counted against the gateway's one cap, and a graceful stop is bounded.
@Suite("gorush gRPC listener, silent clients")
struct GorushGRPCConnectionTests {
    /// Runs the listener (health service only) in a service group, and `body` with its port and the group.
    static func withListener(
        limits: GRPCConnectionGuard.Limits, connections: OpenConnections, shutdownGrace: Duration = .seconds(20),
        _ body: @Sendable (_ port: Int, _ group: ServiceGroup) async throws -> Void
    ) async throws {
        let log = LogRecorder()
        let server = GorushGRPCServer(
            host: "127.0.0.1", port: 0, services: [GorushGRPCHealthService()], connections: connections, limits: limits, shutdownGrace: shutdownGrace,
            logger: log.logger()
        )
        var quiet = Logger(label: "grpc-test")
        quiet.logLevel = .critical
        let group = ServiceGroup(configuration: .init(services: [server], logger: quiet))
        let running = Task { try await group.run() }
        defer { running.cancel() }
        let limit = ContinuousClock.now + .seconds(30)
        var port: Int?
        while port == nil, ContinuousClock.now < limit {
            port = log.all.first { $0.message == "listening" }.flatMap { $0.metadata["port"] }.flatMap { Int($0) }
            if port == nil { try await Task.sleep(for: .milliseconds(20)) }
        }
        try await body(try #require(port), group)
        await group.triggerGracefulShutdown()
        _ = try? await running.value
    }

    /// A raw TCP connection to the listener.
    static func connect(_ port: Int) async throws -> any Channel {
        try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connect(host: "127.0.0.1", port: port).get()
    }

    /// How long until `channel` is closed (by the server), at most `limit`; nil if it stays open.
    static func closed(_ channel: any Channel, within limit: Duration) async -> Duration? {
        let start = ContinuousClock.now
        while channel.isActive, ContinuousClock.now - start < limit { try? await Task.sleep(for: .milliseconds(20)) }
        return channel.isActive ? nil : ContinuousClock.now - start
    }

    /// The HTTP/2 preface, an empty SETTINGS frame, and a HEADERS frame opening stream 1 for
    /// `proto.Health/Check` (literal fields, no Huffman) whose message never follows.
    static var openedCall: ByteBuffer {
        var block: [UInt8] = []
        for (name, value) in [
            (":method", "POST"), (":scheme", "http"), (":path", "/proto.Health/Check"), (":authority", "x"), ("content-type", "application/grpc"),
            ("te", "trailers"),
        ] {
            block += [0x00, UInt8(name.utf8.count)] + Array(name.utf8) + [UInt8(value.utf8.count)] + Array(value.utf8)
        }
        var bytes = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)
        bytes += [0, 0, 0, 0x04, 0, 0, 0, 0, 0]
        bytes += [0, 0, UInt8(block.count), 0x01, 0x04, 0, 0, 0, 1] + block
        return ByteBuffer(bytes: bytes)
    }

    @Test func aClientThatSaysNothingIsClosedAndOneThatFallsSilentToo() async throws {
        let connections = OpenConnections(limit: 100)
        try await Self.withListener(limits: .init(firstBytes: .milliseconds(300), silence: .milliseconds(800)), connections: connections) { port, _ in
            let mute = try await Self.connect(port)
            let muteClosed = try #require(await Self.closed(mute, within: .seconds(20)), "a connection that never sent a byte stays open")
            #expect(muteClosed >= .milliseconds(250))
            // A call opened, then silence (no message, no answer to the server's PING).
            let silent = try await Self.connect(port)
            try await silent.writeAndFlush(Self.openedCall)
            let silentClosed = try #require(await Self.closed(silent, within: .seconds(20)), "a silent connection stays open")
            #expect(silentClosed >= .milliseconds(700))
            let limit = ContinuousClock.now + .seconds(10)
            while connections.current > 0, ContinuousClock.now < limit { try await Task.sleep(for: .milliseconds(20)) }
            #expect(connections.current == 0)
        }
    }

    @Test func connectionsOverTheGatewaysCapAreClosedAtOnce() async throws {
        let connections = OpenConnections(limit: 2)
        try await Self.withListener(limits: .init(firstBytes: .seconds(60), silence: .seconds(60)), connections: connections) { port, _ in
            let first = try await Self.connect(port)
            let second = try await Self.connect(port)
            // Both counted before the third comes (each connection's handler runs on its own event loop).
            let counted = ContinuousClock.now + .seconds(10)
            while connections.current < 2, ContinuousClock.now < counted { try await Task.sleep(for: .milliseconds(20)) }
            let third = try await Self.connect(port)
            #expect(await Self.closed(third, within: .seconds(10)) != nil, "a third connection over a cap of 2 stays open")
            #expect(first.isActive && second.isActive)
            #expect(connections.current == 2)
            try await first.close()
            let limit = ContinuousClock.now + .seconds(10)
            while connections.current > 1, ContinuousClock.now < limit { try await Task.sleep(for: .milliseconds(20)) }
            #expect(connections.current == 1)
            try await second.close()
        }
    }

    /// A call whose message never comes, on a connection that never answers the server's PING, does not
    /// hold a graceful stop past the listener's grace.
    @Test func aGracefulStopWithASilentCallOpenEndsAfterTheGrace() async throws {
        let connections = OpenConnections(limit: 100)
        let stopped = Mutex<Duration?>(nil)
        try await Self.withListener(limits: .init(firstBytes: .seconds(60), silence: .seconds(60)), connections: connections, shutdownGrace: .milliseconds(500)) {
            port, group in
            let silent = try await Self.connect(port)
            try await silent.writeAndFlush(Self.openedCall)
            try await Task.sleep(for: .milliseconds(200))
            let start = ContinuousClock.now
            await group.triggerGracefulShutdown()
            #expect(await Self.closed(silent, within: .seconds(20)) != nil, "the silent connection outlived the stop")
            stopped.withLock { $0 = ContinuousClock.now - start }
        }
        let elapsed = try #require(stopped.withLock { $0 })
        #expect(elapsed < .seconds(15))
    }
}
