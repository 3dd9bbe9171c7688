import PushgateCore
import PushgateProviderSupport

/// Turns a push service's answer into a ``DeliveryOutcome``.
enum WebPushResponse {
    /// The most characters of an error body a reason keeps: push services' error texts are short, and
    /// the body comes from whichever server an endpoint names.
    static let excerptLimit = 200

    /// The start of an error body for a reason: at most ``excerptLimit`` characters, each control
    /// character (line breaks, escapes) as a space, runs of white space as one, `…` where it was cut.
    static func excerpt(_ body: some Collection<UInt8>) -> String {
        var text = ""
        var count = 0
        var lastWasSpace = true
        for scalar in String(decoding: body, as: UTF8.self).unicodeScalars {
            let isSpace = scalar.properties.isWhitespace || scalar.properties.generalCategory == .control
                || scalar.properties.generalCategory == .format
            if isSpace && lastWasSpace { continue }
            if count == Self.excerptLimit {
                if text.last == " " { text.removeLast() }
                return text + "…"
            }
            text.unicodeScalars.append(isSpace ? " " : scalar)
            count += 1
            lastWasSpace = isSpace
        }
        if text.last == " " { text.removeLast() }
        return text
    }

    /// The outcome for `status`, with the `Retry-After` header and the start of the body for reasons
    /// (``excerpt(_:)``).
    static func outcome(status: Int, retryAfter: String?, body: String) -> DeliveryOutcome {
        let detail = body.isEmpty ? "" : ": " + body
        switch status {
        case 200, 201, 202:
            return .delivered
        case 404, 410:
            return .invalidToken(reason: "push service answered \(status), the subscription is gone")
        case 413:
            return .rejected(reason: "payload too large (push service answered 413)")
        case 401:
            // About this subscription, not the app's key: autopush answers 401 to a subscription made with
            // another application server key, and each push service checks the VAPID token on its own
            // (its `aud` is that service's origin), so one service's 401 says nothing of the others. Taken
            // for the app's credentials, one pusher's endpoint would stop every Web Push delivery.
            return .rejected(reason: "push service answered 401, refusing the VAPID authorization for this subscription\(detail)")
        case 429, 500...599:
            return .retryLater(after: RetryAfter.parse(retryAfter), reason: "push service answered \(status)\(detail)")
        case 408, 425:
            // About this request alone (RFC 9110 §15.5.9, RFC 8470): sent again later, not dropped.
            return .retryLater(after: nil, reason: "push service answered \(status)\(detail)")
        case 400...499:
            return .rejected(reason: "push service answered \(status)\(detail)")
        default:
            return .rejected(reason: "unexpected status \(status) from the push service")
        }
    }
}
