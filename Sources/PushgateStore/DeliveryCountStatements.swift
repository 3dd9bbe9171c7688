/// The SQL of ``DeliveryCountStore``, the same on SQLite and PostgreSQL.
public enum DeliveryCountStatements {
    /// The tables (migration 8): one row per app, front end, outcome and minute, keyed minute first so
    /// that range reads and purges scan only the minutes they need; and the same by hour, so that a day's
    /// totals read 24 hours' rows and not 1,440 minutes'. `integer` is the 64-bit integer type.
    public static func schema(integer: String) -> [String] {
        [
            """
            CREATE TABLE delivery_counts (
                minute \(integer) NOT NULL,
                app_id TEXT NOT NULL,
                front_end TEXT NOT NULL,
                outcome TEXT NOT NULL,
                count \(integer) NOT NULL,
                PRIMARY KEY (minute, app_id, front_end, outcome)
            )
            """,
            """
            CREATE TABLE delivery_counts_hourly (
                hour \(integer) NOT NULL,
                app_id TEXT NOT NULL,
                front_end TEXT NOT NULL,
                outcome TEXT NOT NULL,
                count \(integer) NOT NULL,
                PRIMARY KEY (hour, app_id, front_end, outcome)
            )
            """,
        ]
    }

    /// Adds to one hour's row; binds hour, app id, front end, outcome, count.
    public static let addHourly = """
        INSERT INTO delivery_counts_hourly (hour, app_id, front_end, outcome, count) VALUES ($1, $2, $3, $4, $5)
        ON CONFLICT (hour, app_id, front_end, outcome) DO UPDATE SET count = delivery_counts_hourly.count + excluded.count
        """

    /// PostgreSQL: adds many rows to the hourly sums in one statement; binds five arrays of equal length
    /// (hours, app ids, front ends, outcomes, counts), each key at most once, taken in their order.
    public static let addHourlyRows = Self.addRows(table: "delivery_counts_hourly", time: "hour")

    /// The sums of a range of hours by app, front end and outcome; binds the first hour and the hour after the last.
    public static let selectHourlyTotals = """
        SELECT app_id, front_end, outcome, CAST(SUM(count) AS BIGINT) FROM delivery_counts_hourly WHERE hour >= $1 AND hour < $2
        GROUP BY app_id, front_end, outcome
        """

    /// Deletes the hours before an hour; binds the hour.
    public static let purgeHourly = "DELETE FROM delivery_counts_hourly WHERE hour < $1"

    /// How a range of minutes is read for its totals: the whole hours inside it from the hourly table, the
    /// minutes before the first and after the last whole hour from the minute table.
    public static func plan(minutes: Range<Int64>) -> (hours: Range<Int64>?, minutes: [Range<Int64>]) {
        let firstHour = Self.hour(ofMinute: minutes.lowerBound + 59)
        let endHour = Self.hour(ofMinute: minutes.upperBound)
        guard firstHour < endHour else { return (nil, [minutes]) }
        let edges = [minutes.lowerBound..<(firstHour * 60), (endHour * 60)..<minutes.upperBound].filter { !$0.isEmpty }
        return (firstHour..<endHour, edges)
    }

    /// The hour a minute falls in (both counted from 1970-01-01T00:00Z).
    public static func hour(ofMinute minute: Int64) -> Int64 {
        minute >= 0 ? minute / 60 : (minute - 59) / 60
    }

    /// Sums counts by app, front end and outcome, each sum dated `minute`.
    public static func merge(_ counts: [DeliveryCount], minute: Int64) -> [DeliveryCount] {
        Self.summedByMinute(counts.map { count in
            var dated = count
            dated.minute = minute
            return dated
        })
    }

    /// Sums counts by app, front end, outcome and minute.
    public static func summedByMinute(_ counts: [DeliveryCount]) -> [DeliveryCount] {
        var sums: [DeliveryCount: Int64] = [:]
        for count in counts {
            let key = DeliveryCount(appID: count.appID, frontEnd: count.frontEnd, outcome: count.outcome, minute: count.minute, count: 0)
            sums[key, default: 0] += count.count
        }
        return sums.map { key, sum in
            var total = key
            total.count = sum
            return total
        }
    }

    /// Adds to one row; binds minute, app id, front end, outcome, count.
    public static let add = """
        INSERT INTO delivery_counts (minute, app_id, front_end, outcome, count) VALUES ($1, $2, $3, $4, $5)
        ON CONFLICT (minute, app_id, front_end, outcome) DO UPDATE SET count = delivery_counts.count + excluded.count
        """

    /// PostgreSQL: ``add`` for many rows in one statement; binds five arrays of equal length (minutes, app
    /// ids, front ends, outcomes, counts), each key at most once, taken in their order.
    public static let addRows = Self.addRows(table: "delivery_counts", time: "minute")

    private static func addRows(table: String, time: String) -> String {
        """
        INSERT INTO \(table) (\(time), app_id, front_end, outcome, count)
        SELECT t, a, f, o, c FROM UNNEST($1::BIGINT[], $2::TEXT[], $3::TEXT[], $4::TEXT[], $5::BIGINT[]) WITH ORDINALITY AS r(t, a, f, o, c, i)
        ORDER BY i
        ON CONFLICT (\(time), app_id, front_end, outcome) DO UPDATE SET count = \(table).count + excluded.count
        """
    }

    /// The rows of a range of minutes; binds the first minute and the minute after the last.
    public static let select =
        "SELECT app_id, front_end, outcome, minute, count FROM delivery_counts WHERE minute >= $1 AND minute < $2"

    /// The sums of a range of minutes by app, front end and outcome; binds as ``select``.
    public static let selectTotals = """
        SELECT app_id, front_end, outcome, CAST(SUM(count) AS BIGINT) FROM delivery_counts WHERE minute >= $1 AND minute < $2
        GROUP BY app_id, front_end, outcome
        """

    /// Migration 9: an index of the minutes' counts by outcome, so that the console's chart (the sums by
    /// minute and outcome) reads the index alone, in its order, without sorting.
    public static let byMinuteSchema = ["CREATE INDEX delivery_counts_by_minute ON delivery_counts (minute, outcome, count)"]

    /// The sums by app and outcome of a ``DeliverySumPlan``: binds the hours (first, after last), then two
    /// ranges of minutes added and two subtracted (first, after last; an unused range binds 0 and 0).
    /// Sums of zero are left out (an app whose minutes all fell outside the range).
    public static let selectSumsByApp = """
        SELECT app_id, outcome, CAST(SUM(count) AS BIGINT) FROM (
            SELECT app_id, outcome, count FROM delivery_counts_hourly WHERE hour >= $1 AND hour < $2
            UNION ALL SELECT app_id, outcome, count FROM delivery_counts WHERE minute >= $3 AND minute < $4
            UNION ALL SELECT app_id, outcome, count FROM delivery_counts WHERE minute >= $5 AND minute < $6
            UNION ALL SELECT app_id, outcome, -count FROM delivery_counts WHERE minute >= $7 AND minute < $8
            UNION ALL SELECT app_id, outcome, -count FROM delivery_counts WHERE minute >= $9 AND minute < $10
        ) AS parts GROUP BY app_id, outcome HAVING SUM(count) <> 0
        """

    /// The ten bounds ``selectSumsByApp`` binds for `plan`, in order.
    public static func sumsByAppBounds(_ plan: DeliverySumPlan) -> [Int64] {
        func padded(_ ranges: [Range<Int64>]) -> [Int64] {
            (0..<2).flatMap { ranges.indices.contains($0) ? [ranges[$0].lowerBound, ranges[$0].upperBound] : [0, 0] }
        }
        return [plan.hours.lowerBound, plan.hours.upperBound] + padded(plan.added) + padded(plan.subtracted)
    }

    /// The sums of a range of minutes by minute and outcome; binds the first minute and the minute after the last.
    public static let selectSumsByMinute = """
        SELECT minute, outcome, CAST(SUM(count) AS BIGINT) FROM delivery_counts WHERE minute >= $1 AND minute < $2
        GROUP BY minute, outcome
        """

    /// Deletes the rows before a minute; binds the minute; returns one row per deleted row.
    public static let purge = "DELETE FROM delivery_counts WHERE minute < $1 RETURNING minute"
}
