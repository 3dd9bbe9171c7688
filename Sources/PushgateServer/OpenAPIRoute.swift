import Hummingbird
import NIOCore
import PushgateHTTP

/// `GET /openapi.json`: the OpenAPI 3.1 description of every route, `openapi.json` beside this file, which
/// SwiftPM embeds in the binary byte for byte (`.embedInCode` in Package.swift). `HEAD` is answered too, as
/// wherever `GET` is.
enum OpenAPIRoute {
    /// The path the document is served at.
    static let path = "/openapi.json"

    /// The document's bytes, made once.
    private static let body = ByteBuffer(bytes: PackageResources.openapi_json)

    /// The route.
    static var routes: [GatewayRoute] {
        [GatewayRoute(.get, Self.path) { _, _ in Self.response() }]
    }

    /// `200` with the document as `application/json`.
    static func response() -> Response {
        Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: Self.body))
    }
}
