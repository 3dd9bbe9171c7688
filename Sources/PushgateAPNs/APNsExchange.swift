import NIOCore

/// One request to APNs as it goes on the wire: the `:path` and the headers after the pseudo-headers
/// (`apns-*`, `content-type`, `authorization`), and the JSON body.
struct APNsRequest: Sendable {
    var path: String
    var headers: [(name: String, value: String)]
    var body: ByteBuffer
}

/// APNs' answer to one request: the status, the `retry-after` header, and the body (APNs' JSON reason).
struct APNsAnswer: Sendable {
    var status: Int
    var retryAfter: String?
    var body: ByteBuffer
}

/// Why a request got no answer.
enum APNsExchangeError: Error, Equatable, CustomStringConvertible {
    /// APNs did not process the request (it was refused by GOAWAY or `REFUSED_STREAM`, or never left):
    /// sending it again cannot duplicate it.
    case notProcessed(String)
    /// The connection failed or closed while the request was out; APNs may or may not have it.
    case connectionLost(String)
    /// The deadline passed first; the stream was reset.
    case deadlineExceeded
    /// The stream was reset by APNs or by the HTTP/2 layer with this error code.
    case streamReset(String)

    var description: String {
        switch self {
        case .notProcessed(let why): "not processed: \(why)"
        case .connectionLost(let why): "connection lost: \(why)"
        case .deadlineExceeded: "deadline exceeded"
        case .streamReset(let code): "stream reset: \(code)"
        }
    }
}
