#!/usr/bin/env python3
"""The outbox claim's cost with a large backlog, before and after claims went round-robin across apps.

    benchmarks/claim-cost.py sqlite [BACKLOG] [RUNS]
    benchmarks/claim-cost.py postgres URL [BACKLOG] [RUNS]     # URL: an empty database, e.g. as scripts/test makes
    benchmarks/claim-cost.py postgres-drain URL [BACKLOG] [CLAIMS]   # claims committed, their entries deleted

For each layout of the backlog (one app holding all of it and one entry of another app; 20 apps sharing
it) it builds the outbox of schema version 5 (index on (not_before, id): "before") and of version 6 (and an
index on (app_id, not_before, id): "after"), then runs that version's claim of 128 tokens RUNS times (after: with the count of apps its
share needs, `countOutboxApps`, timed with it), each in a
transaction rolled back (so every run sees the same backlog), and prints the median and 90th percentile
of the claim's time (SQLite: the statement run to its end, in Python's sqlite3 module, the system's
SQLite; PostgreSQL: planning plus execution as EXPLAIN ANALYZE reports them, after ANALYZE). The
statements are the stores' (Sources/PushgateStore/StoreStatements.swift, `claimDueOutboxEntries`) before
and after the change, with the binds written in.
"""
import json
import re
import sqlite3
import statistics
import subprocess
import sys
import time

NOW = 1_750_000_000_000
LIMIT = 128

OLD = """
UPDATE outbox SET lease_owner = $1, lease_until = $2, attempts = attempts + 1
WHERE id IN (
    SELECT id FROM (
        SELECT id,
            SUM(token_count) OVER (ORDER BY not_before, id) AS tokens_so_far,
            ROW_NUMBER() OVER (ORDER BY not_before, id) AS position
        FROM (
            SELECT id, not_before, token_count FROM outbox
            WHERE not_before <= $3 AND (lease_until IS NULL OR lease_until <= $3)
            ORDER BY not_before, id LIMIT $4 {lock}) AS candidates
        ) AS ranked
    WHERE tokens_so_far <= $4 OR position = 1)
RETURNING id, app_id, push_token, payload, attempts, not_before, created_at, last_error, more_tokens
"""

NEW = {
    "sqlite": """
WITH RECURSIVE apps(app_id) AS (
    SELECT MIN(app_id) FROM outbox
    UNION ALL
    SELECT (SELECT MIN(app_id) FROM outbox WHERE app_id > apps.app_id) FROM apps WHERE apps.app_id IS NOT NULL)
UPDATE outbox SET lease_owner = $1, lease_until = $2, attempts = attempts + 1
WHERE id IN (
    SELECT id FROM (
        SELECT id,
            SUM(token_count) OVER (ORDER BY app_rank, not_before, id) AS tokens_so_far,
            ROW_NUMBER() OVER (ORDER BY app_rank, not_before, id) AS position
        FROM (
            SELECT id, not_before, token_count,
                ROW_NUMBER() OVER (PARTITION BY app_id ORDER BY not_before, id) AS app_rank
            FROM (
                SELECT id, app_id, not_before, token_count FROM (
                    SELECT id, app_id, not_before, token_count FROM outbox WHERE not_before <= $3 AND (lease_until IS NULL OR lease_until <= $3)
                    ORDER BY not_before, id LIMIT $4) AS oldest
                UNION
                SELECT due.id, due.app_id, due.not_before, due.token_count FROM apps JOIN outbox AS due ON due.id IN (
                    SELECT id FROM outbox WHERE app_id = apps.app_id AND not_before <= $3 AND (lease_until IS NULL OR lease_until <= $3) ORDER BY not_before, id LIMIT $5)
                ) AS candidates
            ) AS ranked_in_app
        ) AS ranked
    WHERE tokens_so_far <= $4 OR position = 1
    LIMIT $4)
RETURNING id, app_id, push_token, payload, attempts, not_before, created_at, last_error, more_tokens
""",
    "postgres": """
WITH RECURSIVE apps(app_id) AS (
    SELECT MIN(app_id) FROM outbox
    UNION ALL
    SELECT (SELECT MIN(app_id) FROM outbox WHERE app_id > apps.app_id) FROM apps WHERE apps.app_id IS NOT NULL)
UPDATE outbox SET lease_owner = $1, lease_until = $2, attempts = attempts + 1
WHERE id IN (
    SELECT id FROM (
        SELECT id,
            SUM(token_count) OVER (ORDER BY app_rank, not_before, id) AS tokens_so_far,
            ROW_NUMBER() OVER (ORDER BY app_rank, not_before, id) AS position
        FROM (
            SELECT id, not_before, token_count,
                ROW_NUMBER() OVER (PARTITION BY app_id ORDER BY not_before, id) AS app_rank
            FROM (
                SELECT id, app_id, not_before, token_count FROM (
                    SELECT id, app_id, not_before, token_count FROM outbox WHERE not_before <= $3 AND (lease_until IS NULL OR lease_until <= $3)
                    ORDER BY not_before, id LIMIT $4 FOR UPDATE SKIP LOCKED) AS oldest
                UNION
                SELECT due.id, due.app_id, due.not_before, due.token_count FROM apps CROSS JOIN LATERAL (
                    SELECT id, app_id, not_before, token_count FROM outbox WHERE app_id = apps.app_id AND not_before <= $3 AND (lease_until IS NULL OR lease_until <= $3)
                    ORDER BY not_before, id LIMIT $5 FOR UPDATE SKIP LOCKED) AS due
                ) AS candidates
            ) AS ranked_in_app
        ) AS ranked
    WHERE tokens_so_far <= $4 OR position = 1
    LIMIT $4)
RETURNING id, app_id, push_token, payload, attempts, not_before, created_at, last_error, more_tokens
""",
}

# Run before each claim "after": its share is the claim's limit divided among the apps this counts.
COUNT_APPS = """
WITH RECURSIVE apps(app_id) AS (
    SELECT MIN(app_id) FROM outbox
    UNION ALL
    SELECT (SELECT MIN(app_id) FROM outbox WHERE app_id > apps.app_id) FROM apps WHERE apps.app_id IS NOT NULL)
SELECT COUNT(app_id) FROM apps
"""

TABLE = {
    "sqlite": """CREATE TABLE outbox (id INTEGER PRIMARY KEY AUTOINCREMENT, app_id TEXT NOT NULL, push_token TEXT NOT NULL,
        payload BLOB NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, not_before INTEGER NOT NULL, lease_owner TEXT,
        lease_until INTEGER, created_at INTEGER NOT NULL, last_error TEXT, more_tokens TEXT, token_count INTEGER NOT NULL DEFAULT 1)""",
    "postgres": """CREATE TABLE outbox (id BIGSERIAL PRIMARY KEY, app_id TEXT NOT NULL, push_token TEXT NOT NULL,
        payload BYTEA NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, not_before BIGINT NOT NULL, lease_owner TEXT,
        lease_until BIGINT, created_at BIGINT NOT NULL, last_error TEXT, more_tokens TEXT, token_count INTEGER NOT NULL DEFAULT 1)""",
}
INDEX = {"before": ["CREATE INDEX outbox_due ON outbox (not_before, id)"],
         "after": ["CREATE INDEX outbox_due ON outbox (not_before, id)", "CREATE INDEX outbox_due_by_app ON outbox (app_id, not_before, id)"]}
PAYLOAD = '{"kind":"alert","payload":{"data":{"room_id":"!r:example.org","unread":"2"}},"priority":"high"}'


def layouts(backlog):
    """(name, [(app, count)]) in the order the entries are written (oldest first)."""
    return [
        (f"{backlog:,} of app 0, then 1 of app 1", [("app.0", backlog), ("app.1", 1)]),
        (f"20 apps, {backlog // 20:,} each", [(f"app.{n:02}", backlog // 20) for n in range(20)]),
    ]


def statement(version, dialect, apps=1):
    lock = "FOR UPDATE SKIP LOCKED" if dialect == "postgres" else ""
    sql = OLD.replace("{lock}", lock) if version == "before" else NEW[dialect]
    share = max(1, (LIMIT + apps - 1) // max(apps, 1))
    for name, value in (("$1", "'w'"), ("$2", str(NOW + 60_000)), ("$3", str(NOW)), ("$4", str(LIMIT)), ("$5", str(share))):
        sql = sql.replace(name, value)
    return sql


def report(layout, version, times, claimed):
    times = sorted(times)
    p90 = times[int(0.9 * (len(times) - 1))]
    print(f"{layout:40} {version:6} claim of {LIMIT}: median {statistics.median(times):7.3f} ms, p90 {p90:7.3f} ms "
          f"({len(times)} runs; claimed {claimed})")


def run_sqlite(backlog, runs):
    for layout, apps in layouts(backlog):
        for version in ("before", "after"):
            db = sqlite3.connect(f"/tmp/claim-cost-{version}.sqlite", isolation_level=None)
            db.execute("DROP TABLE IF EXISTS outbox")
            db.execute(TABLE["sqlite"])
            for index in INDEX[version]:
                db.execute(index)
            db.execute("BEGIN")
            offset = 0
            for app, count in apps:
                db.executemany(
                    "INSERT INTO outbox (app_id, push_token, payload, not_before, created_at) VALUES (?, ?, ?, ?, ?)",
                    ((app, f"t{offset + i}", PAYLOAD.encode(), NOW - 60_000 + offset + i, NOW) for i in range(count)))
                offset += count
            db.execute("COMMIT")
            times = []
            for _ in range(runs):
                db.execute("BEGIN")
                began = time.perf_counter()
                counted = db.execute(COUNT_APPS).fetchone()[0] if version == "after" else 1
                rows = db.execute(statement(version, "sqlite", counted)).fetchall()
                times.append(1000 * (time.perf_counter() - began))
                db.execute("ROLLBACK")
            report(layout, version, times, f"{len(rows)}, of {len({r[1] for r in rows})} apps")
            db.close()


def run_postgres(url, backlog, runs):
    def psql(sql):
        return subprocess.run(["psql", "-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", url], input=sql, text=True,
                              capture_output=True, check=True).stdout

    for layout, apps in layouts(backlog):
        for version in ("before", "after"):
            setup = ["DROP TABLE IF EXISTS outbox;", TABLE["postgres"] + ";"] + [index + ";" for index in INDEX[version]]
            offset = 0
            for app, count in apps:
                setup.append(f"INSERT INTO outbox (app_id, push_token, payload, not_before, created_at) "
                             f"SELECT '{app}', 't' || i, convert_to('{PAYLOAD}', 'UTF8'), {NOW - 60_000 + offset} + i, {NOW} "
                             f"FROM generate_series(0, {count - 1}) AS i;")
                offset += count
            setup.append("VACUUM ANALYZE outbox;")
            psql("\n".join(setup))
            counted = int(psql(COUNT_APPS)) if version == "after" else 1
            sql = statement(version, "postgres", counted)
            count = f"EXPLAIN (ANALYZE, FORMAT JSON) {COUNT_APPS};\n" if version == "after" else ""
            script = "".join(f"BEGIN;\n{count}EXPLAIN (ANALYZE, FORMAT JSON) {sql};\nROLLBACK;\n" for _ in range(runs))
            out = psql(script)
            plans, decoder, text = [], json.JSONDecoder(), out.strip()
            while text:
                plan, end = decoder.raw_decode(text)
                plans.append(plan[0])
                text = text[end:].strip()
            each = [p["Planning Time"] + p["Execution Time"] for p in plans]
            # "after": the count of apps and the claim, together.
            step = 2 if version == "after" else 1
            times = [sum(each[i:i + step]) for i in range(0, len(each), step)]
            check = psql(f"BEGIN;\nWITH c AS ({sql}) SELECT count(*) || ', of ' || count(DISTINCT app_id) || ' apps' FROM c;\nROLLBACK;\n")
            report(layout, version, times, check.strip())


def run_postgres_drain(url, backlog, claims):
    """Claims committed and their entries deleted, as a worker draining the backlog does: dead index
    entries pile up at the head of the due range until VACUUM, and each claim walks them again."""
    def psql(sql):
        return subprocess.run(["psql", "-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", url], input=sql, text=True,
                              capture_output=True, check=True).stdout

    for layout, apps in layouts(backlog):
        for version in ("before", "after"):
            setup = ["DROP TABLE IF EXISTS outbox;", TABLE["postgres"] + ";"] + [index + ";" for index in INDEX[version]]
            offset = 0
            for app, count in apps:
                setup.append(f"INSERT INTO outbox (app_id, push_token, payload, not_before, created_at) "
                             f"SELECT '{app}', 't' || i, convert_to('{PAYLOAD}', 'UTF8'), {NOW - 60_000 + offset} + i, {NOW} "
                             f"FROM generate_series(0, {count - 1}) AS i;")
                offset += count
            setup.append("VACUUM ANALYZE outbox;")
            psql("\n".join(setup))
            script = "\\timing on\n"
            for _ in range(claims):
                if version == "after":
                    script += COUNT_APPS + ";\n"
                script += statement(version, "postgres", len(apps)) + ";\nDELETE FROM outbox WHERE lease_owner = 'w';\n"
            each = [float(t) for t in re.findall(r"Time: ([0-9.]+) ms", psql(script))]
            step = 3 if version == "after" else 2  # (count,) claim, delete
            report(layout, version + " drain", [sum(each[i:i + step - 1]) for i in range(0, len(each), step)], "each claim deleted")


if __name__ == "__main__":
    if sys.argv[1] == "postgres-drain":
        run_postgres_drain(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 50_000, int(sys.argv[4]) if len(sys.argv) > 4 else 60)
    elif sys.argv[1] == "sqlite":
        run_sqlite(int(sys.argv[2]) if len(sys.argv) > 2 else 50_000, int(sys.argv[3]) if len(sys.argv) > 3 else 50)
    else:
        run_postgres(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 50_000, int(sys.argv[4]) if len(sys.argv) > 4 else 50)
