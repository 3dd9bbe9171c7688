import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
import PushgateProviderSupport
import PushgateSandbox
import PushgateWebPush
import Testing

/// The Web Push provider's own HTTP/1.1 connections, against scripted servers.
@Suite("Web Push connections")
struct HTTP1ConnectionPoolTests {
    static func pool(
        tls: NIOSSLContext? = nil, idleTimeout: TimeAmount = .seconds(60), cancellationGrace: TimeAmount = .seconds(5)
    ) throws -> HTTP1ConnectionPool {
        let context = try tls ?? NIOSSLContext(configuration: .makeClientConfiguration())
        return HTTP1ConnectionPool(
            tls: .success(context), proxy: nil, connectTimeout: .seconds(5), idleTimeout: idleTimeout, maximumIdlePerOrigin: 4,
            cancellationGrace: cancellationGrace)
    }

    /// A safety net, not what these tests measure: long enough for a loaded machine.
    static var soon: NIODeadline { .now() + .seconds(60) }
    static let headers = HTTPHeaders([("TTL", "60"), ("Content-Encoding", "aes128gcm")])

    @Test func keepAliveConnectionsCarryOneMessageAfterAnother() async throws {
        let server = try await ScriptedHTTP1Server { _ in .answer(status: 201, body: "", close: false) }
        let pool = try Self.pool()
        let url = try #require(URL(string: "http://127.0.0.1:\(server.port)/push/abc?x=1"))
        for _ in 0..<5 {
            let answer = try await pool.request(.POST, url, headers: Self.headers, body: ByteBuffer(repeating: 7, count: 100), deadline: Self.soon)
            #expect(answer.status == 201)
        }
        let record = server.snapshot
        #expect(record.connections == 1)
        #expect(record.heads.count == 5)
        #expect(record.heads.first?.uri == "/push/abc?x=1")
        #expect(record.heads.first?.method == .POST)
        #expect(record.heads.first?.headers["Host"] == ["127.0.0.1:\(server.port)"])
        #expect(record.heads.first?.headers["TTL"] == ["60"])
        #expect(record.bodies == [100, 100, 100, 100, 100])
        await pool.shutdown()
        try await server.close()
    }

    /// A caller that gave up (a stopping Waku poller, a delivery past its use) sends nothing: a
    /// destructive poll's messages would be taken and dropped.
    @Test func aCancelledCallerSendsNothing() async throws {
        let server = try await ScriptedHTTP1Server { _ in .answer(status: 201, body: "", close: false) }
        let pool = try Self.pool()
        let url = try #require(URL(string: "http://127.0.0.1:\(server.port)/relay/v1/messages"))
        let request = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await pool.request(.GET, url, headers: HTTPHeaders(), deadline: Self.soon)
        }
        await #expect(throws: CancellationError.self) { _ = try await request.value }
        // The pool still serves a caller that did not give up, and only its request reached the server.
        #expect(try await pool.request(.POST, url, headers: Self.headers, deadline: Self.soon).status == 201)
        #expect(server.snapshot.heads.count == 1)
        await pool.shutdown()
        try await server.close()
    }

    /// A request that cannot be written is refused as such (not as a lost connection, which would be
    /// retried), nothing of it is sent, and the connection it was given carries the next message.
    /// Endpoints may name any number of origins (one host on many ports, say): past the pool's total of
    /// idle connections, a connection is closed after its answer instead of kept.
    @Test func idleConnectionsOfAllOriginsTogetherAreBounded() async throws {
        let servers = try await withThrowingTaskGroup(of: ScriptedHTTP1Server.self) { group in
            for _ in 0..<5 { group.addTask { try await ScriptedHTTP1Server { _ in .answer(status: 201, body: "", close: false) } } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let context = try NIOSSLContext(configuration: .makeClientConfiguration())
        let pool = HTTP1ConnectionPool(
            tls: .success(context), proxy: nil, connectTimeout: .seconds(5), idleTimeout: .seconds(60), maximumIdlePerOrigin: 4, maximumIdle: 3
        )
        for server in servers {
            let url = try #require(URL(string: "http://127.0.0.1:\(server.port)/push"))
            #expect(try await pool.request(.POST, url, headers: Self.headers, body: ByteBuffer(), deadline: Self.soon).status == 201)
        }
        // Three kept; the fourth and fifth origins' connections were closed after their answers.
        var closed = 0
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            closed = servers.map(\.snapshot.closedConnections).reduce(0, +)
            if closed >= 2 { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(closed == 2)
        // A kept one carries the next message of its origin.
        let first = try #require(URL(string: "http://127.0.0.1:\(servers[0].port)/push"))
        #expect(try await pool.request(.POST, first, headers: Self.headers, body: ByteBuffer(), deadline: Self.soon).status == 201)
        #expect(servers[0].snapshot.connections == 1)
        await pool.shutdown()
        for server in servers { try await server.close() }
    }

    @Test func aRequestThatCannotBeWrittenIsRefusedAndItsConnectionKept() async throws {
        let server = try await ScriptedHTTP1Server { _ in .answer(status: 201, body: "", close: false) }
        let pool = try Self.pool()
        let url = try #require(URL(string: "http://127.0.0.1:\(server.port)/push/abc"))
        #expect(try await pool.request(.POST, url, headers: Self.headers, body: ByteBuffer(), deadline: Self.soon).status == 201)
        var injected = Self.headers
        injected.add(name: "Topic", value: "secret\r\nX-Injected: 1")
        await #expect {
            _ = try await pool.request(.POST, url, headers: injected, body: ByteBuffer(), deadline: Self.soon)
        } throws: { error in
            guard let error = error as? HTTP1ExchangeError, error.isRefusal else { return false }
            return error.description == "request not sent: header Topic holds a line break or NUL" && !error.description.contains("secret")
        }
        await #expect {
            _ = try await pool.request(.POST, URL(string: "ftp://127.0.0.1/x")!, headers: Self.headers, body: ByteBuffer(), deadline: Self.soon)
        } throws: { error in
            (error as? HTTP1ExchangeError)?.description == "request not sent: the endpoint is not an http(s) URL"
        }
        #expect(try await pool.request(.POST, url, headers: Self.headers, body: ByteBuffer(), deadline: Self.soon).status == 201)
        let record = server.snapshot
        #expect(record.connections == 1, "the refused request left its connection usable")
        #expect(record.heads.count == 2)
        #expect(!record.heads.contains { $0.headers.contains(name: "X-Injected") })
        await pool.shutdown()
        try await server.close()
    }

    @Test func anAnswerWithConnectionCloseIsNotReusedAndErrorBodiesAreCapped() async throws {
        let long = String(repeating: "e", count: 5000)
        let server = try await ScriptedHTTP1Server { number in
            number == 0 ? .answer(status: 410, body: long, close: true) : .answer(status: 201, body: "", close: false)
        }
        let pool = try Self.pool()
        let url = try #require(URL(string: "http://127.0.0.1:\(server.port)/push/x"))
        let gone = try await pool.request(.POST, url, headers: Self.headers, body: ByteBuffer(), deadline: Self.soon)
        #expect(gone.status == 410)
        #expect(gone.body.count == HTTP1ConnectionPool.defaultBodyLimit)
        #expect(try await pool.request(.POST, url, headers: Self.headers, body: ByteBuffer(), deadline: Self.soon).status == 201)
        #expect(server.snapshot.connections == 2)
        await pool.shutdown()
        try await server.close()
    }

    /// A kept connection the server closes as a request goes out (its keep-alive time ran out), before a
    /// byte of an answer: the request goes once more, on a new connection, and is answered there.
    @Test func aKeptConnectionClosedBeforeAnyAnswerCarriesTheRequestOnceMoreOnANewOne() async throws {
        // The first answer keeps the connection; the server then drops it as the next request arrives.
        let server = try await ScriptedHTTP1Server { number in number == 1 ? .hangUp : .answer(status: 201, body: "", close: false) }
        let pool = try Self.pool()
        let url = try #require(URL(string: "http://127.0.0.1:\(server.port)/push/x"))
        #expect(try await pool.request(.POST, url, headers: Self.headers, body: ByteBuffer(repeating: 1, count: 30), deadline: Self.soon).status == 201)
        #expect(try await pool.request(.POST, url, headers: Self.headers, body: ByteBuffer(repeating: 2, count: 30), deadline: Self.soon).status == 201)
        #expect(server.snapshot.connections == 2)
        #expect(server.snapshot.heads.count == 3)
        #expect(server.snapshot.bodies == [30, 30, 30])
        // The new connection is kept for the next message.
        #expect(try await pool.request(.POST, url, headers: Self.headers, body: ByteBuffer(), deadline: Self.soon).status == 201)
        #expect(server.snapshot.connections == 2)
        await pool.shutdown()
        try await server.close()
    }

    /// Only once, and only for a kept connection with no answer begun: a new connection closed unanswered,
    /// and a kept one closed inside its answer, are reported (the service may have the message: the caller
    /// decides whether it goes again).
    @Test func aConnectionLostOtherwiseIsReportedNotSentAgain() async throws {
        let server = try await ScriptedHTTP1Server { number in
            switch number {
            case 0: .hangUp
            case 2: .headThenHangUp
            default: .answer(status: 201, body: "", close: false)
            }
        }
        let pool = try Self.pool()
        let url = try #require(URL(string: "http://127.0.0.1:\(server.port)/push/x"))
        await #expect(throws: HTTP1ExchangeError.self) {
            try await pool.request(.POST, url, headers: Self.headers, body: ByteBuffer(), deadline: Self.soon)
        }
        #expect(server.snapshot.heads.count == 1)
        try await Task.sleep(for: .milliseconds(100))
        #expect(try await pool.request(.POST, url, headers: Self.headers, body: ByteBuffer(), deadline: Self.soon).status == 201)
        await #expect(throws: HTTP1ExchangeError.self) {
            try await pool.request(.POST, url, headers: Self.headers, body: ByteBuffer(), deadline: Self.soon)
        }
        #expect(server.snapshot.heads.count == 3)
        // The closed connection is not taken again; the next message opens a new one.
        try await Task.sleep(for: .milliseconds(100))
        #expect(try await pool.request(.POST, url, headers: Self.headers, body: ByteBuffer(), deadline: Self.soon).status == 201)
        #expect(server.snapshot.connections == 3)
        #expect(server.snapshot.heads.count == 4)
        await pool.shutdown()
        try await server.close()
    }

    @Test func connectionsIdleForTheIdleTimeoutAreClosedAndNotTakenAgain() async throws {
        let server = try await ScriptedHTTP1Server { _ in .answer(status: 201, body: "", close: false) }
        let pool = try Self.pool(idleTimeout: .milliseconds(300))
        let url = try #require(URL(string: "http://127.0.0.1:\(server.port)/push/x"))
        // Two messages at once: one or two connections, each idle afterwards.
        async let first = pool.request(.POST, url, headers: Self.headers, body: ByteBuffer(), deadline: Self.soon)
        async let second = pool.request(.POST, url, headers: Self.headers, body: ByteBuffer(), deadline: Self.soon)
        #expect(try await [first.status, second.status] == [201, 201])
        let opened = server.snapshot.connections
        // One sweep closes every connection idle for the timeout (polled: a loaded machine runs it late).
        let limit = ContinuousClock.now + .seconds(30)
        while server.snapshot.closedConnections < opened, ContinuousClock.now < limit { try await Task.sleep(for: .milliseconds(50)) }
        #expect(server.snapshot.closedConnections == opened)
        // The next message opens a new connection.
        #expect(try await pool.request(.POST, url, headers: Self.headers, body: ByteBuffer(), deadline: Self.soon).status == 201)
        #expect(server.snapshot.connections == opened + 1)
        await pool.shutdown()
        try await server.close()
    }

    @Test func aSilentServerCostsTheDeadlineAndItsConnectionIsClosed() async throws {
        let server = try await ScriptedHTTP1Server { number in number == 0 ? .ignore : .answer(status: 201, body: "", close: false) }
        let pool = try Self.pool()
        let url = try #require(URL(string: "http://127.0.0.1:\(server.port)/push/x"))
        let started = ContinuousClock.now
        await #expect(throws: HTTP1ExchangeError.self) {
            try await pool.request(.POST, url, headers: Self.headers, body: ByteBuffer(), deadline: .now() + .milliseconds(300))
        }
        let elapsed = ContinuousClock.now - started
        // Well under the 60-second idle timeout, with room for a machine loaded by the rest of the suite.
        #expect(elapsed >= .milliseconds(250) && elapsed < .seconds(30))
        #expect(try await pool.request(.POST, url, headers: Self.headers, body: ByteBuffer(), deadline: Self.soon).status == 201)
        #expect(server.snapshot.connections == 2)
        await pool.shutdown()
        try await server.close()
    }

    /// A connection's timer outlives the request it was set for: a later request with an earlier deadline
    /// still gets its own.
    @Test func aLaterRequestsEarlierDeadlineHoldsOnAKeptConnection() async throws {
        let server = try await ScriptedHTTP1Server { number in number == 0 ? .answer(status: 201, body: "", close: false) : .ignore }
        let pool = try Self.pool()
        let url = try #require(URL(string: "http://127.0.0.1:\(server.port)/push/x"))
        #expect(try await pool.request(.POST, url, headers: Self.headers, body: ByteBuffer(), deadline: .now() + .seconds(600)).status == 201)
        let started = ContinuousClock.now
        await #expect {
            try await pool.request(.POST, url, headers: Self.headers, body: ByteBuffer(), deadline: .now() + .milliseconds(300))
        } throws: { error in
            if case .deadlineExceeded? = error as? HTTP1ExchangeError { true } else { false }
        }
        // Far below the first request's 600 s, with room for a loaded machine.
        #expect(ContinuousClock.now - started < .seconds(60))
        #expect(server.snapshot.connections == 1, "the second request went on the kept connection")
        await pool.shutdown()
        try await server.close()
    }

    /// The timer set for an earlier request's deadline does not end a later request whose own deadline is
    /// still ahead.
    @Test func anEarlierRequestsDeadlineDoesNotEndTheNextRequest() async throws {
        let server = try await ScriptedHTTP1Server { number in
            number == 0 ? .answer(status: 201, body: "", close: false) : .answerLater(status: 202, delay: .seconds(3))
        }
        let pool = try Self.pool()
        let url = try #require(URL(string: "http://127.0.0.1:\(server.port)/push/x"))
        #expect(try await pool.request(.POST, url, headers: Self.headers, body: ByteBuffer(), deadline: .now() + .seconds(2)).status == 201)
        // Sent before the first deadline's timer fires (unless the machine is very slow), answered after it.
        #expect(try await pool.request(.POST, url, headers: Self.headers, body: ByteBuffer(), deadline: Self.soon).status == 202)
        #expect(server.snapshot.connections == 1)
        await pool.shutdown()
        try await server.close()
    }

    @Test func aCancelledRequestWaitsOnlyItsGraceForAServerThatNeverAnswers() async throws {
        let server = try await ScriptedHTTP1Server { _ in .ignore }
        let pool = try Self.pool(cancellationGrace: .milliseconds(300))
        let url = try #require(URL(string: "http://127.0.0.1:\(server.port)/relay/v1/messages/x"))
        let request = Task { try await pool.request(.GET, url, headers: Self.headers, deadline: .now() + .seconds(300)) }
        // The request is out once the server has it.
        while server.snapshot.heads.isEmpty { try await Task.sleep(for: .milliseconds(20)) }
        let cancelled = ContinuousClock.now
        request.cancel()
        await #expect(throws: HTTP1ExchangeError.self) { try await request.value }
        // Far below the 300 s deadline, with room for a loaded machine.
        #expect(ContinuousClock.now - cancelled < .seconds(60))
        await pool.shutdown()
        try await server.close()
    }

    @Test func anAnswerArrivingWithinTheGraceOfACancelledRequestIsKept() async throws {
        let server = try await ScriptedHTTP1Server { _ in .answerLater(status: 200, delay: .milliseconds(300)) }
        let pool = try Self.pool(cancellationGrace: .seconds(120))
        let url = try #require(URL(string: "http://127.0.0.1:\(server.port)/relay/v1/messages/x"))
        let request = Task { try await pool.request(.GET, url, headers: Self.headers, deadline: .now() + .seconds(300)) }
        while server.snapshot.heads.isEmpty { try await Task.sleep(for: .milliseconds(20)) }
        request.cancel()
        #expect(try await request.value.status == 200)
        await pool.shutdown()
        try await server.close()
    }

    @Test func httpsIsVerifiedAgainstTheTrustRoots() async throws {
        let authority = try SandboxCertificateAuthority()
        let server = try await ScriptedHTTP1Server(tls: NIOSSLContext(configuration: authority.makeServerTLSConfiguration())) { _ in
            .answer(status: 201, body: "", close: false)
        }
        let url = try #require(URL(string: "https://127.0.0.1:\(server.port)/push/x"))
        var trusting = TLSConfiguration.makeClientConfiguration()
        trusting.trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(Array(authority.caCertificatePEM.utf8)))
        let verified = try Self.pool(tls: NIOSSLContext(configuration: trusting))
        #expect(try await verified.request(.POST, url, headers: Self.headers, body: ByteBuffer(), deadline: Self.soon).status == 201)
        // The system trust store does not know the sandbox CA: the handshake fails and nothing is sent.
        let untrusting = try Self.pool()
        await #expect(throws: (any Error).self) {
            try await untrusting.request(.POST, url, headers: Self.headers, body: ByteBuffer(), deadline: Self.soon)
        }
        #expect(server.snapshot.heads.count == 1)
        await verified.shutdown()
        await untrusting.shutdown()
        try await server.close()
    }

    @Test func aNewConnectionGoesToThePinnedAddressNotASecondLookup() async throws {
        let server = try await ScriptedHTTP1Server { _ in .answer(status: 201, body: "", close: false) }
        let pool = try Self.pool()
        // `.invalid` never resolves: the connection can only have gone to the pinned address.
        let url = try #require(URL(string: "http://push.invalid:\(server.port)/push/x"))
        let loopback = try #require(IPAddress(literal: "127.0.0.1"))
        #expect(try await pool.request(.POST, url, at: [loopback], headers: Self.headers, body: ByteBuffer(), deadline: Self.soon).status == 201)
        #expect(server.snapshot.heads.first?.headers["Host"] == ["push.invalid:\(server.port)"])
        await pool.shutdown()
        try await server.close()
    }

    @Test func requestTargetsKeepTheEndpointsEncoding() throws {
        let encoded = try #require(URL(string: "https://push.example/wpush/v2/gAAAA%3D%3D?a=b"))
        #expect(HTTP1ConnectionPool.target(of: encoded) == "/wpush/v2/gAAAA%3D%3D?a=b")
        let bare = try #require(URL(string: "https://push.example"))
        #expect(HTTP1ConnectionPool.target(of: bare) == "/")
        let ipv6 = try #require(URL(string: "https://[::1]:8443/x"))
        let origin = try #require(HTTP1ConnectionPool.Origin(ipv6))
        #expect(origin.host == "::1")
        #expect(origin.hostHeader == "[::1]:8443")
        #expect(origin.serverName == nil)
        let named = try #require(URL(string: "https://fcm.googleapis.com/fcm/send/x"))
        #expect(HTTP1ConnectionPool.Origin(named)?.hostHeader == "fcm.googleapis.com")
    }
}
