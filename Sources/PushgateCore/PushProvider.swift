/// A delivery back end for one configured app: it sends one notification to one device token over its
/// provider's protocol and reports a closed ``DeliveryOutcome``.
///
/// `deliver` never throws: every transport failure, provider status and reason becomes an outcome.
/// Implementations bound their own concurrency and put a deadline on every request. Each is a class: after
/// a reload, a back end is told from the one that replaced it by identity.
public protocol PushProvider: AnyObject, Sendable {
    /// The app id (or glob) this provider was configured for.
    var appID: String { get }
    /// The provider it talks to.
    var platform: Platform { get }
    /// Whether the app's deliveries share one circuit (see the dispatcher): true for a provider with one
    /// service behind it, whose failures are everyone's; false for one that posts to many independent
    /// servers (UnifiedPush endpoints on any host) and keeps failing hosts apart itself.
    var sharesOneCircuit: Bool { get }
    /// The time to live, in seconds, the back end sends for a notification that states none (a Web Push or
    /// UnifiedPush app's `ttl` setting); nil when the provider's service applies its own default. The
    /// outbox counts it from when the notification was queued, as it counts a stated one.
    var defaultTimeToLive: Int? { get }
    /// Sends `notification` to `token`, giving up at `deadline`.
    /// - Parameters:
    ///   - notification: the provider-ready notification.
    ///   - token: the APNs device token (hex), FCM registration token, or Web Push subscription JSON.
    ///   - deadline: when to stop waiting; the outcome is then `retryLater`.
    func deliver(_ notification: PushNotification, to token: String, deadline: ContinuousClock.Instant) async -> DeliveryOutcome
}

extension PushProvider {
    /// One service behind the provider: its failures open the app's circuit.
    public var sharesOneCircuit: Bool { true }
    /// The provider's service applies its own default time to live.
    public var defaultTimeToLive: Int? { nil }
}
