/// Deliveries counted per app, front end, outcome and minute, shared by every instance on the store (the
/// operator console's figures).
public protocol DeliveryCountStore: Sendable {
    /// Adds each count to its row (app, front end, outcome, minute), creating it when absent, all in one
    /// transaction.
    func addDeliveryCounts(_ counts: [DeliveryCount]) async throws
    /// Every row whose minute is in `minutes`, in no particular order.
    func deliveryCounts(minutes: Range<Int64>) async throws -> [DeliveryCount]
    /// The rows whose minute is in `minutes`, summed by app, front end and outcome; each sum's `minute` is
    /// `minutes.lowerBound`. Whole hours are read from hourly sums kept beside the minutes, so a day's
    /// totals read about 24 rows per app, front end and outcome.
    func deliveryTotals(minutes: Range<Int64>) async throws -> [DeliveryCount]
    /// The deliveries of each app and outcome whose minute is in `minutes`, all front ends together, read
    /// as a ``DeliverySumPlan`` (whole hours from the hourly sums); apps and outcomes without any are left
    /// out. `currentMinute` only guides the plan (see ``DeliverySumPlan/init(minutes:currentMinute:)``).
    func deliverySumsByApp(minutes: Range<Int64>, currentMinute: Int64) async throws -> [DeliveryAppSum]
    /// The deliveries of each minute in `minutes` and outcome, all apps and front ends together; minutes
    /// and outcomes without any are left out.
    func deliverySumsByMinute(minutes: Range<Int64>) async throws -> [DeliveryMinuteSum]
    /// Deletes the rows of minutes before `minute` (and the hourly sums of hours before its hour).
    /// - Returns: how many minute rows were deleted.
    func purgeDeliveryCounts(before minute: Int64) async throws -> Int
}
