/// How many deliveries of one app, through one front end, ended with one outcome within one minute.
///
/// The stores keep one row for each (app, front end, outcome, minute); every instance on one database adds
/// to the same rows, so the figures are the deployment's.
public struct DeliveryCount: Sendable, Hashable {
    /// The app that delivered.
    public var appID: String
    /// The front end the notification came through (`matrix`, `gorush`, `nextcloud`, `status`, …).
    public var frontEnd: String
    /// The outcome's label (``PushgateCore/DeliveryOutcome/label``): `delivered`, `invalid_token`, …
    public var outcome: String
    /// The minute, counted from 1970-01-01T00:00Z.
    public var minute: Int64
    /// How many deliveries.
    public var count: Int64

    /// Creates a count.
    public init(appID: String, frontEnd: String, outcome: String, minute: Int64, count: Int64) {
        self.appID = appID
        self.frontEnd = frontEnd
        self.outcome = outcome
        self.minute = minute
        self.count = count
    }
}
