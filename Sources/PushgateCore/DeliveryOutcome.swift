/// The closed set of results a delivery back end reports for one notification to one device.
///
/// Back ends translate every provider status and reason string into one of these cases, so front ends
/// never see a provider's vocabulary.
public enum DeliveryOutcome: Sendable, Equatable {
    /// The provider accepted the notification.
    case delivered
    /// The device token is no longer valid; the registration must be dropped.
    case invalidToken(reason: String)
    /// A transient failure; try again, no earlier than `after` when the provider said so.
    case retryLater(after: Duration?, reason: String)
    /// A permanent failure for this notification (payload too large, misconfiguration, …).
    case rejected(reason: String)
    /// The provider refused the app's own credentials (an APNs provider token or certificate, an FCM or
    /// HMS access token it would not issue or accept, a VAPID key): nothing about the device or the
    /// notification. The dispatcher marks the app's credentials failing and reports it to front ends as
    /// ``retryLater(after:reason:)``, so queued work stays queued until the credentials work again.
    case credentialsRefused(reason: String)

    /// A short label for metrics and logs: `delivered`, `invalid_token`, `retry_later`, `rejected` or
    /// `credentials_refused`.
    public var label: String {
        switch self {
        case .delivered: "delivered"
        case .invalidToken: "invalid_token"
        case .retryLater: "retry_later"
        case .rejected: "rejected"
        case .credentialsRefused: "credentials_refused"
        }
    }

    /// Why the delivery did not succeed (the provider's reason, or the gateway's); nil for `delivered`.
    public var failureReason: String? {
        switch self {
        case .delivered: nil
        case .invalidToken(let reason), .rejected(let reason), .credentialsRefused(let reason), .retryLater(_, let reason): reason
        }
    }
}
