import PushgateCore
import PushgateProviderSupport

/// How the UnifiedPush back end classes what happened to one message, as the common-proxies Matrix gateway
/// does where homeservers and clients depend on it (a 404 or any unexpected answer means the endpoint is
/// gone and its pushkey is rejected; 429 and 5xx are temporary, and so are 408 and 425, about the request
/// alone), and as the UnifiedPush server rules say
/// where common-proxies is stricter (any 2xx is success, not only 200 and 201).
enum UnifiedPushAnswer {
    /// What to remember after an answer.
    enum Memory: Equatable {
        /// Nothing (delivered, or a refusal about this message only).
        case none
        /// The endpoint is gone.
        case endpointGone
        /// The endpoint is failing, for the push server's `Retry-After` if it gave one.
        case endpointUnavailable(pause: Duration?)
    }

    /// The outcome of a push server's answer, and what to remember of the endpoint.
    static func classify(status: Int, retryAfter: String?) -> (outcome: DeliveryOutcome, memory: Memory) {
        switch status {
        case 200...299:
            return (.delivered, .none)
        case 413:
            // The message, not the endpoint: the pushkey stays.
            return (.rejected(reason: "payload too large (push server answered 413)"), .none)
        case 429, 500...599:
            let pause = RetryAfter.parse(retryAfter)
            return (.retryLater(after: pause, reason: "push server answered \(status)"), .endpointUnavailable(pause: pause))
        case 408, 425:
            // About this request, not the endpoint (RFC 9110 §15.5.9, RFC 8470): a server may send a 408 on
            // an idle kept-alive connection as a request goes out on it. Rejected, the pushkey's pusher
            // would be deleted by its homeserver.
            return (.retryLater(after: nil, reason: "push server answered \(status), try the request again"), .none)
        case 404, 410:
            return (.invalidToken(reason: "push server answered \(status), the endpoint is gone"), .endpointGone)
        case 300...399:
            // Redirects are never followed (the UnifiedPush server rules); the endpoint is not one.
            return (.invalidToken(reason: "push server answered \(status), a redirect (not followed)"), .endpointGone)
        default:
            return (.invalidToken(reason: "push server answered \(status), not a UnifiedPush endpoint"), .endpointGone)
        }
    }
}
