import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import PushgateHTTP
@testable import PushgateServer
import Testing

/// `GET /openapi.json` serves the repository's `openapi.json` (Sources/PushgateServer/openapi.json, embedded
/// by SwiftPM) byte for byte.
@Suite("OpenAPI document")
struct OpenAPIRouteTests {
    /// `openapi.json` in the server target's folder.
    static var repositoryDocument: Data {
        get throws {
            let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            return try Data(contentsOf: root.appendingPathComponent("Sources/PushgateServer/openapi.json"))
        }
    }

    static func withApplication(_ body: @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        let router = GatewayRouterBuilder.build(routes: OpenAPIRoute.routes, metrics: GatewayMetrics(), maxRequestBodySize: 1024)
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)), logger: TestLogging.quiet)
        try await app.test(.live) { client in try await body(client) }
    }

    @Test func theServedDocumentIsTheRepositoryFileByteForByte() async throws {
        let expected = try Self.repositoryDocument
        try await Self.withApplication { client in
            let response = try await client.execute(uri: "/openapi.json", method: .get)
            #expect(response.status == .ok)
            #expect(response.headers[.contentType] == "application/json")
            #expect(Data(response.body.readableBytesView) == expected)
            let head = try await client.execute(uri: "/openapi.json", method: .head)
            #expect(head.status == .ok)
            #expect(head.body.readableBytes == 0)
        }
    }

    @Test func theDocumentIsOpenAPI31AndDescribesEveryRoute() throws {
        let document = try #require(try JSONSerialization.jsonObject(with: Self.repositoryDocument) as? [String: Any])
        #expect((document["openapi"] as? String)?.hasPrefix("3.1.") == true)
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        let operations = Set(paths.flatMap { path, item in item.keys.map { "\($0.uppercased()) \(path)" } })
        // Every route the gateway registers (at the default Nextcloud prefix and gorush paths, with the
        // sandbox), and HEAD wherever GET is; of the console, its JSON API (its pages are HTML for people).
        #expect(operations == [
            "POST /_matrix/push/v1/notify", "POST /_matrix/push/v1/notify/{rest}",
            "GET /_matrix/push/v1/notify", "HEAD /_matrix/push/v1/notify",
            "POST /devices", "DELETE /devices", "POST /notifications",
            "GET /health", "HEAD /health", "GET /metrics", "HEAD /metrics",
            "GET /openapi.json", "HEAD /openapi.json", "GET /sandbox/deliveries", "HEAD /sandbox/deliveries",
            "POST /api/push", "GET /api/stat/app", "HEAD /api/stat/app", "GET /healthz", "HEAD /healthz", "GET /version", "HEAD /version",
            "GET /console/api/overview", "HEAD /console/api/overview", "POST /console/api/test-push",
        ])
    }
}
