import NIOCore
import NIOPosix
import NIOSSL
@testable import PushgateAPNs
import PushgateProviderSupport
import PushgateSandbox
import Testing

/// An attempt to connect succeeds only when the server's SETTINGS arrive: a server whose TLS the client
/// refuses (a revoked certificate, wrong trust roots, an intercepting proxy) is not connected to again for
/// every request, however quickly its TCP accepts.
@Suite("APNs connection backoff")
struct APNsConnectionBackoffTests {
    static func request() -> APNsRequest {
        APNsRequest(path: "/3/device/a1", headers: [("apns-topic", "im.example")], body: ByteBuffer(string: #"{"aps":{}}"#))
    }

    @Test func aRefusedTLSHandshakeIsAFailedAttemptAndTheNextWaitsForTheBackoff() async throws {
        // The server's certificate comes from a CA the client does not trust.
        let server = try await ScriptedHTTP2Server(authority: try SandboxCertificateAuthority()) { _ in .answer }
        let connection = APNsConnection(
            eventLoop: MultiThreadedEventLoopGroup.singleton.next(),
            target: .init(host: "127.0.0.1", port: server.port, tls: try NIOSSLContext(configuration: .makeClientConfiguration())),
            backoff: ReconnectBackoff(initial: .seconds(30), maximum: .seconds(60))
        )
        let deadline = NIODeadline.now() + .seconds(20)
        // The request waited for a connection that never became one: it never left.
        await #expect {
            _ = try await connection.execute(Self.request(), deadline: deadline)
        } throws: { error in
            guard case .notProcessed = error as? APNsExchangeError else { return false }
            return true
        }
        await #expect {
            _ = try await connection.execute(Self.request(), deadline: deadline)
        } throws: { error in
            guard case .notProcessed(let why) = error as? APNsExchangeError else { return false }
            return why.hasPrefix("connecting again in")
        }
        #expect(server.record.withLock { $0.connections } == 1)
        await connection.shutdown()
        try await server.close()
    }
}
