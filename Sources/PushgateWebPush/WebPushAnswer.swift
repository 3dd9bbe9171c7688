/// A push service's answer to one message: the status, `Retry-After`, and the start of the body.
struct WebPushAnswer: Sendable {
    var status: Int
    var retryAfter: String?
    /// At most ``WebPushHTTP1Handler/bodyLimit`` bytes of the body.
    var body: [UInt8]
    /// Whether the connection may carry another message (a keep-alive answer, read to its end).
    var connectionReusable: Bool
}

/// Why a message got no answer.
enum WebPushExchangeError: Error, CustomStringConvertible {
    /// The deadline passed first (the connection was closed).
    case deadlineExceeded
    /// The connection closed or failed before the answer ended.
    case connectionLost(String)
    /// The pool is shut down.
    case shutDown
    /// The connection could not take the request (it had closed); nothing was sent.
    case notSent

    var description: String {
        switch self {
        case .deadlineExceeded: "deadline exceeded"
        case .connectionLost(let why): "connection lost: \(why)"
        case .shutDown: "the provider is shut down"
        case .notSent: "the connection had closed before sending"
        }
    }
}
