/// What happened to one device of a notify request.
enum MatrixDeviceResult: Sendable, Equatable {
    /// Sent, or deliberately not sent (nothing to show, filtered, duplicate).
    case done
    /// The pushkey goes into `rejected`; the homeserver deletes the pusher.
    case rejected
    /// A transient failure, or a provider's refusal that is not about the token: the whole request
    /// answers 502 so the homeserver retries and its operator sees the failure.
    case failed(reason: String)
}
