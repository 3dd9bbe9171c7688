/// A server's answer to one request: the status, `Retry-After`, and the start of the body.
public struct HTTP1Answer: Sendable {
    public var status: Int
    public var retryAfter: String?
    /// At most the pool's `bodyLimit` bytes of the body.
    public var body: [UInt8]
    /// Whether the connection may carry another message (a keep-alive answer, read to its end).
    public var connectionReusable: Bool
}

/// Why a request got no answer.
public enum HTTP1ExchangeError: Error, CustomStringConvertible {
    /// The deadline passed first (the connection was closed).
    case deadlineExceeded
    /// The connection closed or failed before the answer ended.
    case connectionLost(String)
    /// The pool is shut down.
    case shutDown
    /// The connection could not take the request (it had closed); nothing was sent.
    case notSent
    /// The request cannot be written as HTTP/1.1 (an endpoint that is not an http(s) URL, a header name
    /// that is not a token, a value holding a line break or NUL); nothing was sent and sending it again
    /// cannot work. Names the header, never its value.
    case refused(String)

    /// Whether this is ``refused(_:)``: the request can never be sent as it is.
    public var isRefusal: Bool {
        if case .refused = self { true } else { false }
    }

    public var description: String {
        switch self {
        case .deadlineExceeded: "deadline exceeded"
        case .connectionLost(let why): "connection lost: \(why)"
        case .shutDown: "the provider is shut down"
        case .notSent: "the connection had closed before sending"
        case .refused(let why): "request not sent: \(why)"
        }
    }
}
