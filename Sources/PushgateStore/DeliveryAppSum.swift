/// How many deliveries of one app ended with one outcome over a range of minutes, all front ends together
/// (``DeliveryCountStore/deliverySumsByApp(minutes:currentMinute:)``).
public struct DeliveryAppSum: Sendable, Hashable {
    /// The app that delivered.
    public var appID: String
    /// The outcome's label (``PushgateCore/DeliveryOutcome/label``).
    public var outcome: String
    /// How many deliveries.
    public var count: Int64

    /// Creates a sum.
    public init(appID: String, outcome: String, count: Int64) {
        self.appID = appID
        self.outcome = outcome
        self.count = count
    }
}
