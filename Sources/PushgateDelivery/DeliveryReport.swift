public import PushgateCore

/// What a front end asks to be told about a notification it queued: which front end, and whatever it
/// needs to act on the outcome (a gorush caller's `notif_id` and platform, say). It is stored with the
/// notification in the outbox, so the report survives restarts and reaches whichever instance delivers.
public struct DeliveryReport: Sendable, Hashable, Codable {
    /// The ``DeliveryOutcomeObserver`` it goes to, by front-end name (`gorush`).
    public var frontEnd: String
    /// The front end's own context, opaque to delivery.
    public var context: JSONValue

    /// Creates a report request.
    public init(frontEnd: String, context: JSONValue) {
        self.frontEnd = frontEnd
        self.context = context
    }
}

/// A front end that acts on how its queued notifications ended (counts them, tells the sender).
public protocol DeliveryOutcomeObserver: Sendable {
    /// The front-end name its reports carry.
    var frontEnd: String { get }
    /// Called once per queued notification and token, after its final outcome is stored: delivered,
    /// invalid token, rejected, or `retryLater` when the outbox gave it up.
    func deliveryEnded(_ report: DeliveryReport, appID: String, token: String, outcome: DeliveryOutcome) async
}
