import Foundation
public import Hummingbird

/// The error body of routes that have no protocol of their own (health, metrics, unknown paths): the
/// Matrix error shape, `{"errcode": "M_…", "error": "…"}`, which Matrix homeservers and humans both read.
public struct GatewayErrorBody: HTTPResponseError {
    public let status: HTTPResponse.Status
    /// The Matrix-style error code, such as `M_UNRECOGNIZED`.
    public let errcode: String
    /// A human-readable explanation.
    public let message: String
    /// Extra response headers (for example `Allow` on 405).
    public var headers: HTTPFields = [:]

    /// Creates an error response.
    public init(status: HTTPResponse.Status, errcode: String, message: String) {
        self.status = status
        self.errcode = errcode
        self.message = message
    }

    /// The body's bytes: `{"errcode":"…","error":"…"}`.
    public var json: [UInt8] {
        Array((try? JSONSerialization.data(withJSONObject: ["errcode": self.errcode, "error": self.message], options: [.sortedKeys])) ?? Data())
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        let body = self.json
        var headers = self.headers
        headers[.contentType] = "application/json"
        return Response(status: self.status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    public static let unrecognized = GatewayErrorBody(status: .notFound, errcode: "M_UNRECOGNIZED", message: "Unrecognized request")
    public static let tooLarge = GatewayErrorBody(status: .contentTooLarge, errcode: "M_TOO_LARGE", message: "Request body too large")
    public static let internalError = GatewayErrorBody(status: .internalServerError, errcode: "M_UNKNOWN", message: "Internal server error")
}
