#!/usr/bin/env python3
"""The outbox claim's cost with a large backlog: claims in due order, round-robin across apps, and
round-robin across lanes (an app and one of its front ends).

    benchmarks/claim-cost.py sqlite [BACKLOG] [RUNS]
    benchmarks/claim-cost.py postgres URL [BACKLOG] [RUNS]     # URL: an empty database, e.g. as scripts/test makes
    benchmarks/claim-cost.py postgres-drain URL [BACKLOG] [CLAIMS]   # claims committed, their entries deleted
    VERSIONS="v6 v7" benchmarks/claim-cost.py …                 # some schema versions only (default: all three)

For each layout of the backlog (one app holding all of it and one entry of another app; one front end of an
app holding all of it and one entry of another front end of the same app; 20 apps sharing it; 20 apps of two
front ends each sharing it) it builds the outbox of schema version 5 (index on (not_before, id): "v5"),
of version 6 (and an index on (app_id, not_before, id): "v6") and of version 7 (a front_end column, and
the index on (app_id, front_end, not_before, id) instead of version 6's: "v7"), then runs that version's
claim of 128 tokens RUNS times (v6 and v7: with the count of apps or lanes their share needs,
`countOutboxApps` or `countOutboxLanes`, timed with it), each in a transaction rolled back (so every run
sees the same backlog), and prints the median and 90th percentile of the claim's time (SQLite: the
statement run to its end, in Python's sqlite3 module, the system's SQLite; PostgreSQL: planning plus
execution as EXPLAIN ANALYZE reports them, after ANALYZE), and whether the claim took the backlog's last
entry (`fresh`, the other app's or front end's). The statements are the stores'
(Sources/PushgateStore/StoreStatements.swift, `claimDueOutboxEntries`) of each version, with the binds
written in.
"""
import os
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

V6 = {
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

# The lanes (app and front end) with entries: SQLite scans the apps, then each app's front ends;
# PostgreSQL steps from lane to lane with one row comparison.
V7_LANES = {
    "sqlite": """
WITH RECURSIVE apps(app_id) AS (
    SELECT MIN(app_id) FROM outbox
    UNION ALL
    SELECT (SELECT MIN(app_id) FROM outbox WHERE app_id > apps.app_id) FROM apps WHERE apps.app_id IS NOT NULL),
lanes(app_id, front_end) AS (
    SELECT app_id, (SELECT MIN(front_end) FROM outbox WHERE outbox.app_id = apps.app_id) FROM apps WHERE apps.app_id IS NOT NULL
    UNION ALL
    SELECT app_id, (SELECT MIN(front_end) FROM outbox WHERE outbox.app_id = lanes.app_id AND outbox.front_end > lanes.front_end)
    FROM lanes WHERE lanes.front_end IS NOT NULL)
""",
    "postgres": """
WITH RECURSIVE lanes(app_id, front_end) AS (
    (SELECT app_id, front_end FROM outbox ORDER BY app_id, front_end LIMIT 1)
    UNION ALL
    SELECT next.app_id, next.front_end FROM lanes CROSS JOIN LATERAL (
        SELECT app_id, front_end FROM outbox WHERE (app_id, front_end) > (lanes.app_id, lanes.front_end)
        ORDER BY app_id, front_end LIMIT 1) AS next)
""",
}

V7_CLAIM = """
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
                    SELECT id, app_id, front_end, not_before, token_count FROM outbox WHERE not_before <= $3 AND (lease_until IS NULL OR lease_until <= $3)
                    ORDER BY not_before, id LIMIT $4 {lock}) AS oldest
                UNION
                {shares}
                ) AS candidates
            ) AS ranked_in_lane
        ) AS ranked
    WHERE tokens_so_far <= $4 OR position = 1
    LIMIT $4)
RETURNING id, app_id, push_token, payload, attempts, not_before, created_at, last_error, more_tokens, front_end
"""

V7_SHARES = {
    "sqlite": """SELECT due.id, due.app_id, due.front_end, due.not_before, due.token_count FROM lanes JOIN outbox AS due ON due.id IN (
                    SELECT id FROM outbox WHERE app_id = lanes.app_id AND front_end = lanes.front_end AND not_before <= $3 AND (lease_until IS NULL OR lease_until <= $3) ORDER BY not_before, id LIMIT $5)""",
    "postgres": """SELECT due.id, due.app_id, due.front_end, due.not_before, due.token_count FROM lanes CROSS JOIN LATERAL (
                    SELECT id, app_id, front_end, not_before, token_count FROM outbox WHERE app_id = lanes.app_id AND front_end = lanes.front_end AND not_before <= $3 AND (lease_until IS NULL OR lease_until <= $3)
                    ORDER BY not_before, id LIMIT $5 FOR UPDATE SKIP LOCKED) AS due""",
}

V7 = {dialect: V7_LANES[dialect] + V7_CLAIM.replace("{lock}", "FOR UPDATE SKIP LOCKED" if dialect == "postgres" else "").replace("{shares}", shares)
      for dialect, shares in V7_SHARES.items()}

# Run before each claim of v6: its share is the claim's limit divided among the apps this counts.
COUNT_APPS = """
WITH RECURSIVE apps(app_id) AS (
    SELECT MIN(app_id) FROM outbox
    UNION ALL
    SELECT (SELECT MIN(app_id) FROM outbox WHERE app_id > apps.app_id) FROM apps WHERE apps.app_id IS NOT NULL)
SELECT COUNT(app_id) FROM apps
"""

# Run before each claim of v7: its share is the claim's limit divided among the lanes this counts.
COUNT_LANES = {dialect: lanes + "SELECT COUNT(front_end) FROM lanes" for dialect, lanes in V7_LANES.items()}


def count(version, dialect):
    """The statement counting what a version's share divides the claim among (None for v5)."""
    return {"v5": None, "v6": COUNT_APPS, "v7": COUNT_LANES[dialect]}[version]


VERSIONS = os.environ.get("VERSIONS", "v5 v6 v7").split()

TABLE = {
    "sqlite": """CREATE TABLE outbox (id INTEGER PRIMARY KEY AUTOINCREMENT, app_id TEXT NOT NULL, push_token TEXT NOT NULL,
        payload BLOB NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, not_before INTEGER NOT NULL, lease_owner TEXT,
        lease_until INTEGER, created_at INTEGER NOT NULL, last_error TEXT, more_tokens TEXT, token_count INTEGER NOT NULL DEFAULT 1)""",
    "postgres": """CREATE TABLE outbox (id BIGSERIAL PRIMARY KEY, app_id TEXT NOT NULL, push_token TEXT NOT NULL,
        payload BYTEA NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, not_before BIGINT NOT NULL, lease_owner TEXT,
        lease_until BIGINT, created_at BIGINT NOT NULL, last_error TEXT, more_tokens TEXT, token_count INTEGER NOT NULL DEFAULT 1)""",
}
# Version 7's column, added after the table is made as migration 7 adds it.
FRONT_END = "ALTER TABLE outbox ADD COLUMN front_end TEXT NOT NULL DEFAULT ''"
SCHEMA = {"v5": ["CREATE INDEX outbox_due ON outbox (not_before, id)"],
          "v6": ["CREATE INDEX outbox_due ON outbox (not_before, id)", "CREATE INDEX outbox_due_by_app ON outbox (app_id, not_before, id)"],
          "v7": [FRONT_END, "CREATE INDEX outbox_due ON outbox (not_before, id)",
                 "CREATE INDEX outbox_due_by_lane ON outbox (app_id, front_end, not_before, id)"]}
PAYLOAD = '{"kind":"alert","payload":{"data":{"room_id":"!r:example.org","unread":"2"}},"priority":"high"}'


def layouts(backlog):
    """(name, [(app, front end, count)]) in the order the entries are written (oldest first); the last
    entry written gets the token `fresh`. Versions before 7 store no front end."""
    return [
        (f"{backlog:,} of app 0, then 1 of app 1", [("app.0", "gorush", backlog), ("app.1", "gorush", 1)]),
        (f"{backlog:,} of app 0 by one front end, then 1 by another", [("app.0", "gorush", backlog), ("app.0", "nextcloud", 1)]),
        (f"20 apps, {backlog // 20:,} each", [(f"app.{n:02}", "gorush", backlog // 20) for n in range(20)]),
        (f"20 apps of 2 front ends, {backlog // 40:,} each", [(f"app.{n // 2:02}", ("gorush", "nextcloud")[n % 2], backlog // 40) for n in range(40)]),
    ]


def statement(version, dialect, lanes=1):
    lock = "FOR UPDATE SKIP LOCKED" if dialect == "postgres" else ""
    sql = {"v5": OLD.replace("{lock}", lock), "v6": V6[dialect], "v7": V7[dialect]}[version]
    share = max(1, (LIMIT + lanes - 1) // max(lanes, 1))
    for name, value in (("$1", "'w'"), ("$2", str(NOW + 60_000)), ("$3", str(NOW)), ("$4", str(LIMIT)), ("$5", str(share))):
        sql = sql.replace(name, value)
    return sql


def rows_of(layout, version):
    """(app, front end, token, not_before) of each entry, oldest first (front end None before v7)."""
    offset, total = 0, sum(count for _, _, count in layout)
    for app, front_end, count in layout:
        for i in range(count):
            token = "fresh" if offset + i == total - 1 else f"t{offset + i}"
            yield app, front_end if version == "v7" else None, token, NOW - 60_000 + offset + i
        offset += count


def report(layout, version, times, claimed):
    times = sorted(times)
    p90 = times[int(0.9 * (len(times) - 1))]
    print(f"{layout:52} {version:8} claim of {LIMIT}: median {statistics.median(times):7.3f} ms, p90 {p90:7.3f} ms "
          f"({len(times)} runs; claimed {claimed})")


def run_sqlite(backlog, runs):
    for layout, apps in layouts(backlog):
        for version in VERSIONS:
            db = sqlite3.connect(f"/tmp/claim-cost-{version}.sqlite", isolation_level=None)
            db.execute("DROP TABLE IF EXISTS outbox")
            db.execute(TABLE["sqlite"])
            for step in SCHEMA[version]:
                db.execute(step)
            db.execute("BEGIN")
            if version == "v7":
                db.executemany(
                    "INSERT INTO outbox (app_id, front_end, push_token, payload, not_before, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                    ((app, front_end, token, PAYLOAD.encode(), due, NOW) for app, front_end, token, due in rows_of(apps, version)))
            else:
                db.executemany(
                    "INSERT INTO outbox (app_id, push_token, payload, not_before, created_at) VALUES (?, ?, ?, ?, ?)",
                    ((app, token, PAYLOAD.encode(), due, NOW) for app, _, token, due in rows_of(apps, version)))
            db.execute("COMMIT")
            times = []
            for _ in range(runs):
                db.execute("BEGIN")
                began = time.perf_counter()
                counted = db.execute(count(version, "sqlite")).fetchone()[0] if count(version, "sqlite") else 1
                rows = db.execute(statement(version, "sqlite", counted)).fetchall()
                times.append(1000 * (time.perf_counter() - began))
                db.execute("ROLLBACK")
            fresh = "fresh taken" if any(r[2] == "fresh" for r in rows) else "fresh not taken"
            report(layout, version, times, f"{len(rows)}, of {len({r[1] for r in rows})} apps, {fresh}")
            db.close()


def psql_runner(url):
    def psql(sql):
        return subprocess.run(["psql", "-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", url], input=sql, text=True,
                              capture_output=True, check=True).stdout
    return psql


def postgres_setup(apps, version):
    """The statements that make the version's outbox holding the layout's backlog, analysed."""
    setup = ["DROP TABLE IF EXISTS outbox;", TABLE["postgres"] + ";"] + [step + ";" for step in SCHEMA[version]]
    offset, total = 0, sum(count for _, _, count in apps)
    for app, front_end, count in apps:
        columns, value = ("app_id, front_end", f"'{app}', '{front_end}'") if version == "v7" else ("app_id", f"'{app}'")
        token = f"CASE WHEN {offset} + i = {total - 1} THEN 'fresh' ELSE 't' || ({offset} + i) END"
        setup.append(f"INSERT INTO outbox ({columns}, push_token, payload, not_before, created_at) "
                     f"SELECT {value}, {token}, convert_to('{PAYLOAD}', 'UTF8'), {NOW - 60_000 + offset} + i, {NOW} "
                     f"FROM generate_series(0, {count - 1}) AS i;")
        offset += count
    setup.append("VACUUM ANALYZE outbox;")
    return "\n".join(setup)


def run_postgres(url, backlog, runs):
    psql = psql_runner(url)
    for layout, apps in layouts(backlog):
        for version in VERSIONS:
            psql(postgres_setup(apps, version))
            counting = count(version, "postgres")
            counted = int(psql(counting)) if counting else 1
            sql = statement(version, "postgres", counted)
            explained = f"EXPLAIN (ANALYZE, FORMAT JSON) {counting};\n" if counting else ""
            script = "".join(f"BEGIN;\n{explained}EXPLAIN (ANALYZE, FORMAT JSON) {sql};\nROLLBACK;\n" for _ in range(runs))
            out = psql(script)
            plans, decoder, text = [], json.JSONDecoder(), out.strip()
            while text:
                plan, end = decoder.raw_decode(text)
                plans.append(plan[0])
                text = text[end:].strip()
            each = [p["Planning Time"] + p["Execution Time"] for p in plans]
            # v6 and v7: the count of apps or lanes and the claim, together.
            step = 2 if counting else 1
            times = [sum(each[i:i + step]) for i in range(0, len(each), step)]
            check = psql(f"BEGIN;\nWITH c AS ({sql}) SELECT count(*) || ', of ' || count(DISTINCT app_id) || ' apps, '"
                         f" || CASE WHEN bool_or(push_token = 'fresh') THEN 'fresh taken' ELSE 'fresh not taken' END FROM c;\nROLLBACK;\n")
            report(layout, version, times, check.strip())


def run_postgres_drain(url, backlog, claims):
    """Claims committed and their entries deleted, as a worker draining the backlog does: dead index
    entries pile up at the head of the due range until VACUUM, and each claim walks them again."""
    psql = psql_runner(url)
    for layout, apps in layouts(backlog):
        for version in VERSIONS:
            psql(postgres_setup(apps, version))
            lanes = len(apps) if version == "v7" else len({app for app, _, _ in apps})
            script = "\\timing on\n"
            counting = count(version, "postgres")
            for _ in range(claims):
                if counting:
                    script += counting + ";\n"
                script += statement(version, "postgres", lanes) + ";\nDELETE FROM outbox WHERE lease_owner = 'w';\n"
            each = [float(t) for t in re.findall(r"Time: ([0-9.]+) ms", psql(script))]
            step = 3 if counting else 2  # (count,) claim, delete
            report(layout, version + " drain", [sum(each[i:i + step - 1]) for i in range(0, len(each), step)], "each claim deleted")


if __name__ == "__main__":
    if sys.argv[1] == "postgres-drain":
        run_postgres_drain(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 50_000, int(sys.argv[4]) if len(sys.argv) > 4 else 60)
    elif sys.argv[1] == "sqlite":
        run_sqlite(int(sys.argv[2]) if len(sys.argv) > 2 else 50_000, int(sys.argv[3]) if len(sys.argv) > 3 else 50)
    else:
        run_postgres(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 50_000, int(sys.argv[4]) if len(sys.argv) > 4 else 50)
