/// How ``DeliveryCountStore/deliverySumsByApp(minutes:currentMinute:)`` reads a range of minutes: whole
/// hours from the hourly sums, plus the minutes of the range in a partial hour at either end, or minus
/// the minutes of such an hour outside the range, whichever reads fewer rows.
///
/// The last hour ending now, for instance, is the hourly sums of the previous hour and this one, minus
/// the previous hour's minutes before the range (at most 30 of them) and the minutes after now (normally
/// none): not 60 minutes' rows.
public struct DeliverySumPlan: Sendable, Equatable {
    /// The hours whose hourly sums are added.
    public var hours: Range<Int64>
    /// The minutes whose rows are added (at most two ranges).
    public var added: [Range<Int64>]
    /// The minutes whose rows are subtracted (at most two ranges, each within an hour of `hours`).
    public var subtracted: [Range<Int64>]

    /// Creates a plan.
    public init(hours: Range<Int64>, added: [Range<Int64>], subtracted: [Range<Int64>]) {
        self.hours = hours
        self.added = added
        self.subtracted = subtracted
    }

    /// The cheapest plan for `minutes`. Minutes after `currentMinute` are taken to hold no rows (they only
    /// do when an instance's clock is ahead); that guides the choice, never the result.
    public init(minutes: Range<Int64>, currentMinute: Int64) {
        func cost(_ range: Range<Int64>) -> Int64 { max(0, min(range.upperBound, currentMinute + 1) - range.lowerBound) }
        self.init(hours: 0..<0, added: [], subtracted: [])
        guard !minutes.isEmpty else { return }
        let firstHour = DeliveryCountStatements.hour(ofMinute: minutes.lowerBound)
        let lastHour = DeliveryCountStatements.hour(ofMinute: minutes.upperBound - 1)
        if firstHour == lastHour {
            let before = (firstHour * 60)..<minutes.lowerBound
            let after = minutes.upperBound..<((firstHour + 1) * 60)
            if cost(before) + cost(after) < cost(minutes) {
                self.hours = firstHour..<(firstHour + 1)
                self.subtracted = [before, after].filter { !$0.isEmpty }
            } else {
                self.added = [minutes]
            }
            return
        }
        var start = firstHour + 1
        let leading = minutes.lowerBound..<(start * 60)
        let beforeLeading = (firstHour * 60)..<minutes.lowerBound
        if beforeLeading.isEmpty {
            start = firstHour
        } else if cost(beforeLeading) < cost(leading) {
            start = firstHour
            self.subtracted.append(beforeLeading)
        } else {
            self.added.append(leading)
        }
        var end = lastHour
        let trailing = (lastHour * 60)..<minutes.upperBound
        let afterTrailing = minutes.upperBound..<((lastHour + 1) * 60)
        if afterTrailing.isEmpty {
            end = lastHour + 1
        } else if cost(afterTrailing) < cost(trailing) {
            end = lastHour + 1
            self.subtracted.append(afterTrailing)
        } else {
            self.added.append(trailing)
        }
        self.hours = start < end ? start..<end : 0..<0
    }
}
