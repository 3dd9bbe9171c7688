/// How many deliveries ended with one outcome within one minute, all apps and front ends together
/// (``DeliveryCountStore/deliverySumsByMinute(minutes:)``).
public struct DeliveryMinuteSum: Sendable, Hashable {
    /// The minute, counted from 1970-01-01T00:00Z.
    public var minute: Int64
    /// The outcome's label (``PushgateCore/DeliveryOutcome/label``).
    public var outcome: String
    /// How many deliveries.
    public var count: Int64

    /// Creates a sum.
    public init(minute: Int64, outcome: String, count: Int64) {
        self.minute = minute
        self.outcome = outcome
        self.count = count
    }
}
