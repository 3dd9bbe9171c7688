import Foundation
import Hummingbird
import NIOCore
import PushgateConfig
import PushgateHTTP
import ServiceLifecycle
@testable import PushgateServer
import Testing

/// The gateway's HTTP/1 server, in process, against raw sockets: pipelined requests before a malformed
/// one, methods that are not tokens, and input that can never become a request. The header and idle
/// timeouts are a minute, so an answer within the client's 20 s wait came at once, not from a timeout.
@Suite("HTTP/1 edge cases")
struct HTTP1EdgeCaseTests {
    static let health = "GET /health HTTP/1.1\r\nHost: x\r\n\r\n"
    static let malformed = #"{"errcode":"M_UNRECOGNIZED","error":"Malformed HTTP request"}"#
    static let unknownMethod = #"{"errcode":"M_UNRECOGNIZED","error":"Unknown method"}"#
    /// The start of a TLS 1.2 ClientHello.
    static let clientHello: [UInt8] = [0x16, 0x03, 0x01, 0x00, 0xa5, 0x01, 0x00, 0x00, 0xa1, 0x03, 0x03] + Array(repeating: 0x42, count: 32)

    /// Runs `body` with the port of a listener whose one route, `GET /health`, answers `ok`.
    static func withListener(_ body: @Sendable (Int) async throws -> Void) async throws {
        let router = Router(context: GatewayRequestContext.self)
        router.get("/health") { _, _ in "ok" }
        var settings = HTTPSettings()
        settings.headerTimeout = .seconds(60)
        settings.idleTimeout = .seconds(60)
        let ports = AsyncStream.makeStream(of: Int.self)
        let listener = Gateway.listener(
            name: "test", responder: router.buildResponder(), limits: ListenerLimits(settings), connections: OpenConnections(limit: 1_024), host: "127.0.0.1", port: 0,
            logger: TestLogging.quiet, onListening: { _, _, port in ports.continuation.yield(port) }
        )
        let server = Task { try await listener.run() }
        defer { server.cancel() }
        var iterator = ports.stream.makeAsyncIterator()
        try await body(try #require(await iterator.next()))
    }

    @Test func requestsPipelinedBeforeAMalformedOneAreAllAnsweredInOrderBeforeIts400() async throws {
        try await Self.withListener { port in
            for bad in [Array("\u{0}GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8), Self.clientHello, Array("GET /health\tHTTP/1.1\r\n\r\n".utf8)] {
                let outcome = try await RawHTTPConnection.exchange(port: port, [.init(Array(String(repeating: Self.health, count: 49).utf8) + bad)])
                #expect(outcome.statuses == Array(repeating: 200, count: 49) + [400], "\(outcome.received.suffix(400))")
                #expect(outcome.lastBody == Self.malformed)
                #expect(outcome.closedAfter != nil, "the connection closes after the 400")
            }
            // The client goes on writing after the malformed request: the answers are not lost.
            let outcome = try await RawHTTPConnection.exchange(
                port: port, [.init(String(repeating: Self.health, count: 49) + "\u{0}junk"), .init("more junk")]
            )
            #expect(outcome.statuses == Array(repeating: 200, count: 49) + [400], "\(outcome.received.suffix(400))")
            #expect(outcome.closedAfter != nil)
        }
    }

    /// A request line whose method is not an RFC 9110 token is 400; a well-formed method the server does
    /// not implement stays 501. Either closes the connection.
    @Test(arguments: [
        ("TLS ClientHello", clientHello, 400),
        ("NUL", Array("\u{0}GET /health HTTP/1.1\r\nHost: x\r\n\r\n".utf8), 400),
        ("NUL in the method", Array("GE\u{0}T /health HTTP/1.1\r\nHost: x\r\n\r\n".utf8), 400),
        ("tab after the method", Array("GET\t/health HTTP/1.1\r\nHost: x\r\n\r\n".utf8), 400),
        ("no method", Array(" /health HTTP/1.1\r\nHost: x\r\n\r\n".utf8), 400),
        ("binary", [0xff, 0xfe, 0x00, 0x01, 0x0d, 0x0a, 0x0d, 0x0a], 400),
        ("unknown method", Array("FOO /health HTTP/1.1\r\nHost: x\r\n\r\n".utf8), 501),
        ("lower-case method", Array("get /health HTTP/1.1\r\nHost: x\r\n\r\n".utf8), 501),
        ("method with token punctuation", Array("X-PURGE! /health HTTP/1.1\r\nHost: x\r\n\r\n".utf8), 501),
    ])
    func aMethodThatIsNotATokenIs400AndAnUnknownOne501(name: String, request: [UInt8], status: Int) async throws {
        try await Self.withListener { port in
            let outcome = try await RawHTTPConnection.exchange(port: port, [.init(request)])
            #expect(outcome.statuses == [status], "\(name): \(outcome.received)")
            #expect(outcome.lastBody == (status == 400 ? Self.malformed : Self.unknownMethod), "\(name)")
            #expect(outcome.closedAfter != nil, "\(name)")
            // After answered requests on a kept-alive connection, the same answer.
            let after = try await RawHTTPConnection.exchange(port: port, [.init(Self.health, pause: .milliseconds(300)), .init(request)])
            #expect(after.statuses == [200, status], "\(name): \(after.received)")
            #expect(after.closedAfter != nil, "\(name)")
        }
    }

    /// An HTTP/0.9 request line and a stream of empty lines are answered 400 and closed at once, not at
    /// the (minute-long) header timeout.
    @Test(arguments: [
        ("HTTP/0.9 request line", [RawHTTPConnection.Step("GET /health\r\n")]),
        ("HTTP/0.9 request line, bare LF", [RawHTTPConnection.Step("GET /health\n")]),
        ("HTTP/0.9 request line in pieces", [RawHTTPConnection.Step("GET /hea", pause: .milliseconds(200)), .init("lth\r\n")]),
        ("HTTP/0.9 after an answered request", [RawHTTPConnection.Step(health, pause: .milliseconds(300)), .init("GET /health\r\n")]),
        ("empty lines", [RawHTTPConnection.Step(String(repeating: "\r\n", count: 40))]),
        ("empty lines in writes of their own", (0..<6).map { _ in RawHTTPConnection.Step("\r\n", pause: .milliseconds(100)) }),
        ("empty lines after an answered request", [RawHTTPConnection.Step(health, pause: .milliseconds(300)), .init(String(repeating: "\r\n", count: 40))]),
    ])
    func inputThatCanNeverBecomeARequestIsRefusedAtOnce(name: String, steps: [RawHTTPConnection.Step]) async throws {
        try await Self.withListener { port in
            let outcome = try await RawHTTPConnection.exchange(port: port, steps)
            #expect(outcome.statuses.last == 400, "\(name): \(outcome.received)")
            #expect(outcome.lastBody == Self.malformed, "\(name)")
            let closedAfter = try #require(outcome.closedAfter, "\(name): closed at once, not at the header timeout")
            #expect(closedAfter < .seconds(15), "\(name)")
        }
    }

    /// What RFC 9112 §2.2 allows, and requests whose bytes arrive in awkward pieces, are still answered.
    @Test(arguments: [
        ("empty lines before the request line", [RawHTTPConnection.Step("\r\n\r\n\r\n\r\n" + health)]),
        ("empty lines in a write of their own", [RawHTTPConnection.Step("\r\n\r\n", pause: .milliseconds(200)), .init(health)]),
        ("bare LFs", [RawHTTPConnection.Step("\n\n", pause: .milliseconds(200)), .init(health)]),
        (
            "a request line in pieces",
            [
                RawHTTPConnection.Step("GE", pause: .milliseconds(150)), .init("T /hea", pause: .milliseconds(150)),
                .init("lth HTT", pause: .milliseconds(150)), .init("P/1.", pause: .milliseconds(150)), .init("1\r", pause: .milliseconds(150)),
                .init("\nHost: x\r\n", pause: .milliseconds(150)), .init("\r\n"),
            ]
        ),
        (
            "headers in pieces after an answered request",
            [
                RawHTTPConnection.Step(health + "GET /health HTTP/1.1\r\nHo", pause: .milliseconds(300)), .init("st: x\r\n", pause: .milliseconds(150)),
                .init("Accept: */*\r\n", pause: .milliseconds(150)), .init("\r\n"),
            ]
        ),
        ("a body's end and the next request in pieces", [
            RawHTTPConnection.Step("GET /health HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nab", pause: .milliseconds(150)),
            .init("cdGE", pause: .milliseconds(150)), .init("T /hea", pause: .milliseconds(150)), .init("lth HTTP/1.1\r\n", pause: .milliseconds(150)),
            .init("Host: x\r\n\r\n"),
        ]),
    ])
    func leadingEmptyLinesAndRequestsInPiecesAreAnswered(name: String, steps: [RawHTTPConnection.Step]) async throws {
        try await Self.withListener { port in
            let outcome = try await RawHTTPConnection.exchange(port: port, steps, wait: .seconds(3))
            #expect(!outcome.statuses.isEmpty && outcome.statuses.allSatisfy { $0 == 200 }, "\(name): \(outcome.received)")
            #expect(outcome.closedAfter == nil, "\(name): the connection stays open")
        }
    }
}
