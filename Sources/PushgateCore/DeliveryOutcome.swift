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

    /// A short label for metrics and logs: `delivered`, `invalid_token`, `retry_later` or `rejected`.
    public var label: String {
        switch self {
        case .delivered: "delivered"
        case .invalidToken: "invalid_token"
        case .retryLater: "retry_later"
        case .rejected: "rejected"
        }
    }
}
