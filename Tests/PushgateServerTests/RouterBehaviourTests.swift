import AsyncHTTPClient
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import NIOHTTP1
import PushgateHTTP
@testable import PushgateServer
import PushgateStore
import PushgateStoreSQLite
import Testing

/// The shared middleware and operations routes, in process, over real sockets.
@Suite("Gateway routes")
struct RouterBehaviourTests {
    struct Failure: Error {}

    /// The operations routes plus three probes: one that echoes its body (collected under the limit), one
    /// that fails with an error no middleware knows, and one with a captured parameter.
    /// The health deadline is long: these tests are about answers, not timing, and must pass on a loaded machine.
    static func routes(store: any PushStore, metrics: GatewayMetrics) -> [GatewayRoute] {
        let operations = OperationsRoutes(store: store as? BoundedStore ?? BoundedStore(store, timeout: .seconds(3)), metrics: metrics, healthDeadline: .seconds(60))
        let probes = [
            GatewayRoute(.post, "/echo") { request, context in
                let body = try await request.body.collect(upTo: context.maxUploadSize)
                return Response(status: .ok, body: .init(byteBuffer: body))
            },
            GatewayRoute(.get, "/fail") { _, _ in throw Failure() },
            // A route of a protocol with its own error shape (as gorush's and Nextcloud's are).
            GatewayRoute(.post, "/shaped", errorAnswer: { status, message in
                Response(status: status, body: .init(byteBuffer: ByteBuffer(string: "{\"code\":\(status.code),\"message\":\"\(message)\"}")))
            }) { request, context in
                Response(status: .ok, body: .init(byteBuffer: try await request.body.collect(upTo: context.maxUploadSize)))
            },
            GatewayRoute(.post, "/below/**") { _, _ in Response(status: .ok) },
            GatewayRoute(.get, "/items/{id}") { _, context in
                Response(status: .ok, body: .init(byteBuffer: ByteBuffer(string: context.parameters.get("id") ?? "-")))
            },
        ]
        return operations.routes + probes
    }

    /// The routes behind the router alone.
    static func makeApplication(store: any PushStore, metrics: GatewayMetrics, limit: Int = 1024) -> Application<RouterResponder<GatewayRequestContext>> {
        let router = GatewayRouterBuilder.build(routes: Self.routes(store: store, metrics: metrics), metrics: metrics, maxRequestBodySize: limit)
        return Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)), logger: TestLogging.quiet)
    }

    /// The routes behind the responder the listeners use (fixed paths answered before the router).
    static func makeGatewayApplication(store: any PushStore, metrics: GatewayMetrics, limit: Int = 1024) -> Application<some HTTPResponder<GatewayRequestContext>> {
        let responder = GatewayRouterBuilder.responder(routes: Self.routes(store: store, metrics: metrics), metrics: metrics, maxRequestBodySize: limit)
        return Application(responder: responder, configuration: .init(address: .hostname("127.0.0.1", port: 0)), logger: TestLogging.quiet)
    }

    /// Runs `body` against the listeners' responder (`gateway`) or the router alone: every test runs on
    /// both, so answering fixed paths before the router changes no answer.
    static func withApplication(gateway: Bool, _ body: @Sendable (any TestClientProtocol, GatewayMetrics) async throws -> Void) async throws {
        let directory = try TemporaryDirectory()
        let store = try await SQLiteStore.open(path: directory.path("store.sqlite"), logger: TestLogging.quiet)
        let metrics = GatewayMetrics()
        if gateway {
            try await Self.test(Self.makeGatewayApplication(store: store, metrics: metrics), store: store) { client in try await body(client, metrics) }
        } else {
            try await Self.test(Self.makeApplication(store: store, metrics: metrics), store: store) { client in try await body(client, metrics) }
        }
    }

    /// Runs `body` against `app` live, with the store as one of its services.
    static func test<Responder: HTTPResponder>(
        _ app: Application<Responder>, store: SQLiteStore, _ body: @Sendable (any TestClientProtocol) async throws -> Void
    ) async throws {
        var app = app
        app.addServices(store)
        try await app.test(.live, body)
    }

    @Test(arguments: [true, false]) func healthIsOKWhileTheStoreAnswers(gateway: Bool) async throws {
        try await Self.withApplication(gateway: gateway) { client, _ async throws in
            let response = try await client.execute(uri: "/health", method: .get)
            #expect(response.status == .ok)
            #expect(response.body.readableBytes == 0)
            #expect(try await client.execute(uri: "/health", method: .head).status == .ok)
            // The router's normalisation and captures, whichever responder answers.
            #expect(try await client.execute(uri: "/health/", method: .get).status == .ok)
            #expect(try await client.execute(uri: "/health?verbose=1", method: .get).status == .ok)
            let item = try await client.execute(uri: "/items/7", method: .get)
            #expect(item.status == .ok)
            #expect(String(buffer: item.body) == "7")
        }
    }

    @Test(arguments: [true, false]) func unknownPathsAndMethodsGetMatrixStyleErrors(gateway: Bool) async throws {
        try await Self.withApplication(gateway: gateway) { client, _ async throws in
            let notFound = try await client.execute(uri: "/no/such/path?x=1", method: .get)
            #expect(notFound.status == .notFound)
            #expect(notFound.headers[.contentType] == "application/json")
            #expect(try JSONSerialization.jsonObject(with: Data(String(buffer: notFound.body).utf8)) as? [String: String]
                == ["errcode": "M_UNRECOGNIZED", "error": "Unrecognized request"])
            let wrongMethod = try await client.execute(uri: "/health", method: .post)
            #expect(wrongMethod.status == .methodNotAllowed)
            #expect(wrongMethod.headers[.allow] == "GET, HEAD")
            #expect(String(buffer: wrongMethod.body).contains("M_UNRECOGNIZED"))
            // Paths the router finds a route for otherwise: with a trailing slash, and below a `/**` route.
            for (method, path, allow) in [(HTTPRequest.Method.post, "/health/", "GET, HEAD"), (.get, "/below/x/y", "POST"), (.delete, "/below/z", "POST")] {
                let answer = try await client.execute(uri: path, method: method)
                #expect(answer.status == .methodNotAllowed, "\(method) \(path)")
                #expect(answer.headers[.allow] == allow, "\(method) \(path)")
            }
            #expect(try await client.execute(uri: "/below/x", method: .post).status == .ok)
            #expect(try await client.execute(uri: "/belowx", method: .get).status == .notFound)
            // A route of a protocol with its own error shape answers a wrong method in that shape.
            let shaped = try await client.execute(uri: "/shaped", method: .get)
            #expect(shaped.status == .methodNotAllowed)
            #expect(shaped.headers[.allow] == "POST")
            #expect(String(buffer: shaped.body) == #"{"code":405,"message":"Unrecognized request"}"#)
        }
    }

    @Test(arguments: [true, false]) func bodiesOverTheLimitGet413WhetherDeclaredOrStreamed(gateway: Bool) async throws {
        try await Self.withApplication(gateway: gateway) { client, _ async throws in
            let small = try await client.execute(uri: "/echo", method: .post, body: ByteBuffer(string: "hello"))
            #expect(small.status == .ok)
            #expect(String(buffer: small.body) == "hello")

            let declared = try await client.execute(uri: "/echo", method: .post, body: ByteBuffer(repeating: 0x61, count: 1025))
            #expect(declared.status == .contentTooLarge)
            #expect(String(buffer: declared.body).contains("M_TOO_LARGE"))

            // A chunked body declares no length: the limit applies while it is read.
            let port = try #require(client.port)
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/echo")
            request.method = .POST
            let chunks = (0..<8).map { _ in ByteBuffer(repeating: 0x62, count: 256) }
            request.body = .stream(chunks.asAsyncStream, length: .unknown)
            let streamed = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
            #expect(streamed.status.code == 413)

            // A route with its protocol's own error shape gets the refusal in that shape, declared or streamed.
            let shaped = try await client.execute(uri: "/shaped", method: .post, body: ByteBuffer(repeating: 0x61, count: 1025))
            #expect(shaped.status == .contentTooLarge)
            #expect(String(buffer: shaped.body) == #"{"code":413,"message":"Request body too large"}"#)
            var shapedStream = HTTPClientRequest(url: "http://127.0.0.1:\(port)/shaped/")
            shapedStream.method = .POST
            shapedStream.body = .stream(chunks.asAsyncStream, length: .unknown)
            let shapedStreamed = try await HTTPClient.shared.execute(shapedStream, timeout: .seconds(10))
            #expect(shapedStreamed.status.code == 413)
            #expect(String(buffer: try await shapedStreamed.body.collect(upTo: 4096)) == #"{"code":413,"message":"Request body too large"}"#)
        }
    }

    @Test(arguments: [true, false]) func unexpectedErrorsBecomeA500InTheSameShape(gateway: Bool) async throws {
        try await Self.withApplication(gateway: gateway) { client, _ async throws in
            let response = try await client.execute(uri: "/fail", method: .get)
            #expect(response.status == .internalServerError)
            #expect(String(buffer: response.body).contains("M_UNKNOWN"))
            // The server is still there.
            #expect(try await client.execute(uri: "/health", method: .get).status == .ok)
        }
    }

    @Test(arguments: [true, false]) func requestsAreCountedByRouteMethodAndStatus(gateway: Bool) async throws {
        try await Self.withApplication(gateway: gateway) { client, _ async throws in
            for _ in 0..<3 { _ = try await client.execute(uri: "/health", method: .get) }
            _ = try await client.execute(uri: "/missing", method: .get)
            let metrics = try await client.execute(uri: "/metrics", method: .get)
            #expect(metrics.status == .ok)
            #expect(metrics.headers[.contentType]?.hasPrefix("text/plain") == true)
            let text = String(buffer: metrics.body)
            #expect(text.contains(#"pushgate_http_requests_total{route="/health",method="GET",code="200"} 3"#))
            #expect(text.contains(#"pushgate_http_requests_total{route="NotFound",method="GET",code="404"} 1"#))
            _ = try await client.execute(uri: "/items/7", method: .get)
            let again = String(buffer: try await client.execute(uri: "/metrics", method: .get).body)
            #expect(again.contains(#"pushgate_http_requests_total{route="/items/{id}",method="GET",code="200"} 1"#))
            #expect(again.contains(#"pushgate_http_requests_total{route="/metrics",method="GET",code="200"} 1"#))
            #expect(text.contains(#"pushgate_http_request_duration_seconds_count{route="/health",method="GET",code="200"} 3"#))
        }
    }
}

extension Array where Element: Sendable {
    /// The elements as an async sequence.
    var asAsyncStream: AsyncStream<Element> {
        AsyncStream { continuation in
            for element in self { continuation.yield(element) }
            continuation.finish()
        }
    }
}
