import Hummingbird
import NIOCore

/// gorush's answers, byte for byte: `{"counts":N,"logs":[…],"success":"ok"}` and
/// `{"code":N,"message":"…"}` (Go writes a map's keys sorted).
enum GorushResponse {
    /// The answer to an accepted push request.
    static func accepted(counts: Int, logs: [GorushLogEntry]) -> Response {
        let body = "{\"counts\":\(counts),\"logs\":[" + logs.map(\.json).joined(separator: ",") + "],\"success\":\"ok\"}"
        return Self.json(.ok, body)
    }

    /// An error in gorush's shape.
    static func error(_ status: HTTPResponse.Status, _ message: String, headers: HTTPFields = [:]) -> Response {
        var response = Self.json(status, "{\"code\":\(status.code),\"message\":" + GoJSON.string(message) + "}")
        for field in headers { response.headers.append(field) }
        return response
    }

    /// A JSON body.
    static func json(_ status: HTTPResponse.Status, _ body: String) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: body))
        )
    }
}
