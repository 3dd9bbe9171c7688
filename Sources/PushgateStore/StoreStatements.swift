/// The SQL that the SQLite and PostgreSQL stores share.
///
/// Parameters are written `$1`, `$2`, … and each first appears in increasing order, so that SQLite (which
/// numbers named parameters by first appearance) and PostgreSQL bind them the same way. Statements that
/// differ between the two databases live with their store.
public enum StoreStatements {
    /// Columns of `devices`, in the order the stores decode them.
    public static let deviceColumns =
        "namespace, device_id, app_id, push_token, public_key, attributes, created_at, updated_at"

    /// Inserts or replaces a device; binds the eight ``deviceColumns``.
    public static let upsertDevice = """
        INSERT INTO devices (\(deviceColumns)) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
        ON CONFLICT (namespace, device_id) DO UPDATE SET
            app_id = excluded.app_id, push_token = excluded.push_token, public_key = excluded.public_key,
            attributes = excluded.attributes, updated_at = excluded.updated_at
        """

    /// Inserts or replaces `count` devices in one statement; binds the eight ``deviceColumns`` of each in
    /// turn. The devices must have distinct namespace and id.
    public static func upsertDevices(count: Int) -> String {
        let rows = (0..<count).map { row in "(" + (1...8).map { "$\(row * 8 + $0)" }.joined(separator: ", ") + ")" }
        return """
            INSERT INTO devices (\(deviceColumns)) VALUES \(rows.joined(separator: ", "))
            ON CONFLICT (namespace, device_id) DO UPDATE SET
                app_id = excluded.app_id, push_token = excluded.push_token, public_key = excluded.public_key,
                attributes = excluded.attributes, updated_at = excluded.updated_at
            """
    }

    /// How many devices one ``upsertDevices(count:)`` statement takes at most.
    public static let upsertDevicesChunkSize = 500

    /// Inserts a device unless one exists; binds the eight ``deviceColumns``; returns a row when inserted.
    public static let insertDeviceIfAbsent = """
        INSERT INTO devices (\(deviceColumns)) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
        ON CONFLICT (namespace, device_id) DO NOTHING
        RETURNING device_id
        """

    /// Selects one device; binds namespace, device id.
    public static let selectDevice =
        "SELECT \(deviceColumns) FROM devices WHERE namespace = $1 AND device_id = $2"

    /// Selects the devices of a namespace among `count` ids; binds namespace, then the ids.
    public static func selectDevices(count: Int) -> String {
        let placeholders = (0..<count).map { "$\($0 + 2)" }.joined(separator: ", ")
        return "SELECT \(deviceColumns) FROM devices WHERE namespace = $1 AND device_id IN (\(placeholders))"
    }

    /// How many ids one ``selectDevices(count:)`` query takes at most (under SQLite's bind limit).
    public static let selectDevicesChunkSize = 500

    /// Deletes one device; binds namespace, device id; returns the deleted row's id.
    public static let deleteDevice =
        "DELETE FROM devices WHERE namespace = $1 AND device_id = $2 RETURNING device_id"

    /// Deletes every device of an app with a token; binds app id, token; returns the deleted ids.
    public static let deleteDevicesByToken =
        "DELETE FROM devices WHERE app_id = $1 AND push_token = $2 RETURNING device_id"

    /// Counts the devices of a namespace; binds namespace.
    public static let countDevices = "SELECT COUNT(*) FROM devices WHERE namespace = $1"

    /// Columns of `outbox` returned to workers, in the order the stores decode them.
    public static let outboxColumns =
        "id, app_id, push_token, payload, attempts, not_before, created_at, last_error, more_tokens, front_end"

    /// The outbox's columns for several tokens in one entry (see ``OutboxTokenColumns``); rows written
    /// before them hold one token each.
    public static let outboxTokensSchema = [
        "ALTER TABLE outbox ADD COLUMN more_tokens TEXT",
        "ALTER TABLE outbox ADD COLUMN token_count INTEGER NOT NULL DEFAULT 1",
    ]

    /// The outbox's index for claims shared between apps (migration 6), the same on both databases: it
    /// gave the apps with entries (a loose index scan, one probe an app) and each app's due entries oldest
    /// first. Migration 7 replaced it with ``outboxLanesSchema``'s.
    public static let outboxDueByAppSchema = ["CREATE INDEX outbox_due_by_app ON outbox (app_id, not_before, id)"]

    /// The front end that queued each entry, and the index for claims shared between lanes (migration 7),
    /// the same on both databases. A lane is an app and one of its front ends; entries written before
    /// (and any whose front end is not known) have the empty front end, a lane of their app like any
    /// other. The index gives the lanes with entries (a loose index scan, ``outboxLanes(_:)``)
    /// and each lane's due entries oldest first, and serves whatever went by app before (its first
    /// column is the app), so migration 6's index goes: an entry's write updates as many indexes as before.
    /// The index on `(not_before, id)` stays: it gives the oldest due entries of all lanes.
    public static let outboxLanesSchema = [
        "ALTER TABLE outbox ADD COLUMN front_end TEXT NOT NULL DEFAULT ''",
        "CREATE INDEX outbox_due_by_lane ON outbox (app_id, front_end, not_before, id)",
        "DROP INDEX outbox_due_by_app",
    ]

    /// How a database reads each lane's first due entries in ``claimDueOutboxEntries(_:)``.
    public enum ClaimDialect: Sendable {
        /// A correlated `IN` list a lane (SQLite has no `LATERAL`; its writes take turns, so nothing is
        /// locked).
        case sqlite
        /// A `LATERAL` subquery a lane; candidates are taken `FOR UPDATE SKIP LOCKED`, so instances
        /// claiming at once skip each other's rows.
        case postgres
    }

    /// The lanes (app and front end) with entries in the outbox: a loose index scan of
    /// ``outboxLanesSchema``'s index, one probe a lane however many entries it holds.
    ///
    /// PostgreSQL steps from lane to lane with one row comparison, `(app_id, front_end) > (…)`, which its
    /// B-tree searches on both columns; its planner guesses a few rows for such a recursion. SQLite
    /// searches a row comparison by its first column alone (it would walk a lane's whole backlog to find
    /// the next lane), so it scans the apps, then each app's front ends, and the scan of each app ends on a
    /// row with a NULL front end (a nested recursion PostgreSQL's planner guesses at ten thousand rows,
    /// which made its claim costly enough to be compiled, JIT, 100 ms).
    static func outboxLanes(_ dialect: ClaimDialect) -> String {
        switch dialect {
        case .sqlite:
            """
            WITH RECURSIVE apps(app_id) AS (
                SELECT MIN(app_id) FROM outbox
                UNION ALL
                SELECT (SELECT MIN(app_id) FROM outbox WHERE app_id > apps.app_id) FROM apps WHERE apps.app_id IS NOT NULL),
            lanes(app_id, front_end) AS (
                SELECT app_id, (SELECT MIN(front_end) FROM outbox WHERE outbox.app_id = apps.app_id) FROM apps WHERE apps.app_id IS NOT NULL
                UNION ALL
                SELECT app_id, (SELECT MIN(front_end) FROM outbox WHERE outbox.app_id = lanes.app_id AND outbox.front_end > lanes.front_end)
                FROM lanes WHERE lanes.front_end IS NOT NULL)
            """
        case .postgres:
            """
            WITH RECURSIVE lanes(app_id, front_end) AS (
                (SELECT app_id, front_end FROM outbox ORDER BY app_id, front_end LIMIT 1)
                UNION ALL
                SELECT next.app_id, next.front_end FROM lanes CROSS JOIN LATERAL (
                    SELECT app_id, front_end FROM outbox WHERE (app_id, front_end) > (lanes.app_id, lanes.front_end)
                    ORDER BY app_id, front_end LIMIT 1) AS next)
            """
        }
    }

    /// Counts the lanes (app and front end) with entries in the outbox (leased, due or not); binds nothing.
    public static func countOutboxLanes(_ dialect: ClaimDialect) -> String {
        Self.outboxLanes(dialect) + "\nSELECT COUNT(front_end) FROM lanes"
    }

    /// Each lane's share of a claim of `limit` tokens among `lanes` lanes with entries in the outbox: the
    /// number of its first due entries ``claimDueOutboxEntries(_:)`` takes as candidates.
    public static func claimShare(limit: Int, lanes: Int) -> Int {
        max(1, (max(limit, 1) + lanes - 1) / max(lanes, 1))
    }

    /// Leases due entries shared between lanes (an app and one of its front ends), as many as hold at most
    /// `limit` tokens together and always the first; binds owner, lease end (ms), now (ms), limit, each
    /// lane's share (``claimShare(limit:lanes:)`` with ``countOutboxLanes(_:)``); returns ``outboxColumns``.
    ///
    /// The candidates are each lane's share (its first due entries) and the `limit` oldest due entries of
    /// all lanes; they are taken round-robin across lanes: each lane's candidates ranked oldest due first
    /// (`not_before`, then `id`), all lanes' first, then all lanes' second…, lanes in the order of those
    /// entries' due times. So every lane with due entries gets its share of each claim however old
    /// another's backlog is (another app's, or another front end's of the same app), and the room shares
    /// leave (lanes with fewer due entries than their share) goes to the oldest due entries. (An entry
    /// holds at least one token, so no more candidates are needed.)
    ///
    /// The lanes come from a loose index scan of ``outboxLanesSchema``'s index (``outboxLanes(_:)``), and a claim reads about
    /// twice `limit` candidates at most, whatever the backlog and the number of lanes. The share is a bind
    /// (not computed in the statement) so that PostgreSQL plans with its value: an unknown `LIMIT` is
    /// guessed at a tenth of a lane's rows, and with 50,000 of them the guess makes the plan costly
    /// enough to be compiled (JIT), 60 ms a claim.
    public static func claimDueOutboxEntries(_ dialect: ClaimDialect) -> String {
        let due = "not_before <= $3 AND (lease_until IS NULL OR lease_until <= $3)"
        let lock = dialect == .postgres ? " FOR UPDATE SKIP LOCKED" : ""
        let lane = "app_id = lanes.app_id AND front_end = lanes.front_end"
        let shares: String
        switch dialect {
        case .sqlite:
            shares = """
                SELECT due.id, due.app_id, due.front_end, due.not_before, due.token_count FROM lanes JOIN outbox AS due ON due.id IN (
                                    SELECT id FROM outbox WHERE \(lane) AND \(due) ORDER BY not_before, id LIMIT $5)
                """
        case .postgres:
            shares = """
                SELECT due.id, due.app_id, due.front_end, due.not_before, due.token_count FROM lanes CROSS JOIN LATERAL (
                                    SELECT id, app_id, front_end, not_before, token_count FROM outbox WHERE \(lane) AND \(due)
                                    ORDER BY not_before, id LIMIT $5\(lock)) AS due
                """
        }
        // The final LIMIT changes nothing (at most `limit` rows pass the filter) but tells PostgreSQL's
        // planner so, which then updates them through the primary key instead of scanning the table.
        // (SQLite's rows of lanes with a NULL front end, where each app's scan ended, match no entry.)
        return Self.outboxLanes(dialect) + """

            UPDATE outbox SET lease_owner = $1, lease_until = $2, attempts = attempts + 1
            WHERE id IN (
                SELECT id FROM (
                    SELECT id,
                        SUM(token_count) OVER (ORDER BY lane_rank, not_before, id) AS tokens_so_far,
                        ROW_NUMBER() OVER (ORDER BY lane_rank, not_before, id) AS position
                    FROM (
                        SELECT id, not_before, token_count,
                            ROW_NUMBER() OVER (PARTITION BY app_id, front_end ORDER BY not_before, id) AS lane_rank
                        FROM (
                            SELECT id, app_id, front_end, not_before, token_count FROM (
                                SELECT id, app_id, front_end, not_before, token_count FROM outbox WHERE \(due)
                                ORDER BY not_before, id LIMIT $4\(lock)) AS oldest
                            UNION
                            \(shares)
                            ) AS candidates
                        ) AS ranked_in_lane
                    ) AS ranked
                WHERE tokens_so_far <= $4 OR position = 1
                LIMIT $4)
            RETURNING \(Self.outboxColumns)
            """
    }

    /// Removes a leased entry; binds id, owner; returns the id when removed.
    public static let completeOutboxEntry = "DELETE FROM outbox WHERE id = $1 AND lease_owner = $2 RETURNING id"

    /// Deletes finished entries; binds the owner, then the ids as `$2…$N+1`.
    public static func completeOutboxEntries(count: Int) -> String {
        "DELETE FROM outbox WHERE lease_owner = $1 AND id IN (" + (0..<count).map { "$\($0 + 2)" }.joined(separator: ", ") + ") RETURNING id"
    }

    /// The most entries one reschedule statement releases (six binds each, under both databases' limits).
    public static let rescheduleChunkSize = 300

    /// Releases leased entries for later attempts, each with its own time and error, and with its remaining
    /// tokens when they are fewer (NULL first token: all kept); binds id, not-before (ms), error, first
    /// token, more tokens and token count for each entry, then the owner; returns the ids released. (Both
    /// databases name a `VALUES` list's columns `column1`, `column2`…)
    public static func rescheduleOutboxEntries(count: Int) -> String {
        var sql = """
            UPDATE outbox SET lease_owner = NULL, lease_until = NULL, not_before = v.column2, last_error = v.column3, \
            push_token = COALESCE(v.column4, outbox.push_token), \
            more_tokens = CASE WHEN v.column4 IS NULL THEN outbox.more_tokens ELSE v.column5 END, \
            token_count = COALESCE(v.column6, outbox.token_count) FROM (VALUES
            """
        for index in 0..<count {
            let first = 6 * index + 1
            if index > 0 { sql += ", " }
            sql += " (CAST($\(first) AS BIGINT), CAST($\(first + 1) AS BIGINT), CAST($\(first + 2) AS TEXT), "
            sql += "CAST($\(first + 3) AS TEXT), CAST($\(first + 4) AS TEXT), CAST($\(first + 5) AS INTEGER))"
        }
        return sql + ") AS v WHERE outbox.id = v.column1 AND outbox.lease_owner = $\(6 * count + 1) RETURNING id"
    }

    /// Counts the tokens of all outbox entries.
    public static let countOutbox = "SELECT COALESCE(SUM(token_count), 0) FROM outbox"

    /// Each app's tokens in the outbox (all its front ends') and its oldest entry's `created_at` (ms);
    /// binds nothing.
    public static let outboxBacklogByApp = "SELECT app_id, SUM(token_count), MIN(created_at) FROM outbox GROUP BY app_id"

    /// Adds to a counter, restarting it when expired; binds name, amount, expiry (ms or NULL), now (ms);
    /// returns the new value.
    public static let incrementCounter = Self.incrementCounters(count: 1) + "\nRETURNING value"

    /// Adds to `count` distinct counters in one statement, restarting those expired (no RETURNING). The
    /// binds: name 1, amount 1, expiry (ms or NULL, shared by every row), then name and amount of each
    /// further row, then now (ms): SQLite numbers `$N` parameters in order of first appearance, PostgreSQL
    /// by their number, and this order suits both (and, for one row, ``incrementCounter``'s). A name may
    /// appear only once (PostgreSQL's ON CONFLICT cannot update one row twice in a statement):
    /// ``counterIncrements(_:)`` gives each name one row.
    public static func incrementCounters(count: Int) -> String {
        let rows = (0..<count).map { row in
            row == 0 ? "($1, $2, $3)" : "($\(2 * row + 2), $\(2 * row + 3), $3)"
        }
        let now = "$\(2 * count + 2)"
        return """
            INSERT INTO counters (name, value, expires_at) VALUES \(rows.joined(separator: ", "))
            ON CONFLICT (name) DO UPDATE SET
                value = CASE WHEN counters.expires_at IS NOT NULL AND counters.expires_at <= \(now)
                    THEN excluded.value ELSE counters.value + excluded.value END,
                expires_at = CASE WHEN counters.expires_at IS NOT NULL AND counters.expires_at <= \(now)
                    THEN excluded.expires_at ELSE counters.expires_at END
            """
    }

    /// The rows of ``incrementCounters(count:)`` for `amounts`, sorted by name: so every writer locks the
    /// rows of a group in the same order, and two instances writing overlapping groups at once cannot
    /// deadlock.
    public static func counterIncrements(_ amounts: [String: Int64]) -> [(name: String, amount: Int64)] {
        amounts.sorted { $0.key < $1.key }.map { (name: $0.key, amount: $0.value) }
    }

    /// Reads a live counter; binds name, now (ms).
    public static let selectCounter =
        "SELECT value FROM counters WHERE name = $1 AND (expires_at IS NULL OR expires_at > $2)"

    /// Reads the live counters among `count` names; binds now (ms), then the names.
    public static func selectCounters(count: Int) -> String {
        let placeholders = (0..<count).map { "$\($0 + 2)" }.joined(separator: ", ")
        return "SELECT name, value FROM counters WHERE (expires_at IS NULL OR expires_at > $1) AND name IN (\(placeholders))"
    }

    /// Deletes expired counters; binds now (ms); returns their names.
    public static let purgeCounters =
        "DELETE FROM counters WHERE expires_at IS NOT NULL AND expires_at <= $1 RETURNING name"

    /// Columns of `invalid_tokens`, in the order the stores decode them.
    public static let invalidTokenColumns = "app_id, push_token, reason, recorded_at"

    /// Records an invalid token; binds app id, token, reason, time (ms).
    public static let upsertInvalidToken = """
        INSERT INTO invalid_tokens (\(invalidTokenColumns)) VALUES ($1, $2, $3, $4)
        ON CONFLICT (app_id, push_token) DO UPDATE SET reason = excluded.reason, recorded_at = excluded.recorded_at
        """

    /// Selects one invalid token; binds app id, token.
    public static let selectInvalidToken =
        "SELECT \(invalidTokenColumns) FROM invalid_tokens WHERE app_id = $1 AND push_token = $2"

    /// Forgets an invalid token; binds app id, token; returns the app id when removed.
    public static let deleteInvalidToken =
        "DELETE FROM invalid_tokens WHERE app_id = $1 AND push_token = $2 RETURNING app_id"

    /// Forgets invalid tokens recorded before a time; binds time (ms); returns their app ids.
    public static let purgeInvalidTokens = "DELETE FROM invalid_tokens WHERE recorded_at < $1 RETURNING app_id"

    /// Lists invalid tokens recorded since a time; binds time (ms), limit.
    public static let selectInvalidTokensSince =
        "SELECT \(invalidTokenColumns) FROM invalid_tokens WHERE recorded_at >= $1 ORDER BY recorded_at, app_id, push_token LIMIT $2"

    /// The `invalid_tokens` table and its index, the same on both databases (migration 2).
    public static let invalidTokensSchema = [
        """
        CREATE TABLE invalid_tokens (
            app_id TEXT NOT NULL,
            push_token TEXT NOT NULL,
            reason TEXT NOT NULL,
            recorded_at BIGINT NOT NULL,
            PRIMARY KEY (app_id, push_token)
        )
        """,
        "CREATE INDEX invalid_tokens_by_time ON invalid_tokens (recorded_at)",
    ]

    /// The migrations bookkeeping table, the same on both databases.
    public static let createMigrationsTable = """
        CREATE TABLE IF NOT EXISTS pushgate_migrations (
            version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)
        """

    /// The newest applied migration version (NULL on a new database).
    public static let selectSchemaVersion = "SELECT MAX(version) FROM pushgate_migrations"

    /// Records an applied migration; binds version, name, time (ms).
    public static let recordMigration = "INSERT INTO pushgate_migrations (version, name, applied_at) VALUES ($1, $2, $3)"
}
