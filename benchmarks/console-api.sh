#!/usr/bin/env bash
# The console's JSON API (GET /console/api/overview) with 50 apps and 7 days of delivery counts in the
# store, out of process: the gateway (`pushgate serve`, its default log level) and wrk on loopback.
#
#   benchmarks/console-api.sh [BINARY] [DURATION] [CONNECTIONS]
#   POSTGRES_URL=postgres://pushgate@127.0.0.1:5432/bench?sslmode=disable benchmarks/console-api.sh …
#                                   # the same on PostgreSQL (an empty database the script may fill)
#
# The counts are the worst case of 7 days: every minute of the last 7 days has a row for every app and
# every outcome (delivered, invalid_token, retry_later, rejected), through one front end: 50 × 4 × 10,080
# = 2,016,000 minute rows, and the hourly sums that go with them (33,800 rows), written straight into the
# gateway's tables after it migrated the store. The 50 apps are UnifiedPush apps (no credentials to make);
# nothing is delivered during the run, so the figures are the API's alone.
#
# Prints wrk's requests/s and latency percentiles (p50, p90, p99, max) of the overview with a bearer
# token, and checks the answer: 50 apps, each with 60 × its per-minute count in the last hour.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$(realpath "${1:-.build-release/release/pushgate}")
DURATION=${2:-10s}
CONNECTIONS=${3:-4}
source benchmarks/frontends-lib.sh
begin_run console-bench

token=console-bench-admin-token-0123456789
port=$(free_port)
if [ -n "${POSTGRES_URL:-}" ]; then database="{url: '$POSTGRES_URL'}"; else database="{url: 'sqlite:$work/console.sqlite'}"; fi
{
  echo "apps:"
  for i in $(seq -w 1 50); do echo "  app-$i: {type: unifiedpush, allowed_endpoints: ['127.0.0.1:9']}"; done
  http_section "$port"
  echo "database: $database"
  echo "console: {admin_tokens: ['$token']}"
} > "$work/console.yaml"

serve() {
  "$BIN" serve --config "$work/console.yaml" >> "$work/gateway.log" 2>&1 &
  gateway=$!
  pids+=("$gateway")
  for _ in $(seq 300); do curl -sf "http://127.0.0.1:$port/health" > /dev/null && return 0; sleep 0.1; done
  echo "the gateway did not start:" >&2; tail -5 "$work/gateway.log" >&2; exit 1
}

# The first start migrates the store; the counts go in while the gateway is stopped.
serve
kill "$gateway"; wait "$gateway" 2>/dev/null || true
now_minute=$(( $(date +%s) / 60 ))
first_minute=$(( now_minute - 10080 + 1 ))
fill_sql="
WITH RECURSIVE minutes(m) AS (SELECT $first_minute UNION ALL SELECT m + 1 FROM minutes WHERE m < $now_minute),
  apps(a) AS (SELECT 1 UNION ALL SELECT a + 1 FROM apps WHERE a < 50),
  outcomes(o, n) AS (VALUES ('delivered', 7), ('invalid_token', 3), ('retry_later', 2), ('rejected', 1))
INSERT INTO delivery_counts (minute, app_id, front_end, outcome, count)
  SELECT m, 'app-' || CASE WHEN a < 10 THEN '0' ELSE '' END || a, 'matrix', o, n FROM minutes, apps, outcomes;
INSERT INTO delivery_counts_hourly (hour, app_id, front_end, outcome, count)
  SELECT minute / 60, app_id, front_end, outcome, SUM(count) FROM delivery_counts GROUP BY minute / 60, app_id, front_end, outcome;
"
start=$(date +%s)
if [ -n "${POSTGRES_URL:-}" ]; then
  psql -q "$POSTGRES_URL" -c "$fill_sql" > /dev/null
  psql -q "$POSTGRES_URL" -c "VACUUM ANALYZE delivery_counts" -c "VACUUM ANALYZE delivery_counts_hourly" > /dev/null
else
  python3 - "$work/console.sqlite" "$fill_sql" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.executescript(sys.argv[2])
db.execute("ANALYZE")
db.commit()
print(db.execute("SELECT COUNT(*) FROM delivery_counts").fetchone()[0], "minute rows,",
      db.execute("SELECT COUNT(*) FROM delivery_counts_hourly").fetchone()[0], "hour rows", file=sys.stderr)
PY
fi
echo "filled in $(( $(date +%s) - start )) s" >&2

serve
url="http://127.0.0.1:$port/console/api/overview"
curl -sf -H "Authorization: Bearer $token" "$url" > "$work/overview.json"
python3 - "$work/overview.json" <<'PY'
import json, sys
overview = json.load(open(sys.argv[1]))
apps = overview["apps"]
assert len(apps) == 50, len(apps)
# The last hour is 60 minutes (the current one included) of 7, 3, 2 and 1 a minute, the last day 1,440;
# one minute fewer when a minute began after the counts were written (it has none yet).
for app in apps:
    hour, day = app["last_hour"], app["last_day"]
    for outcome, per_minute in (("delivered", 7), ("invalid_token", 3), ("retry_later", 2), ("rejected", 1)):
        assert hour[outcome] in (59 * per_minute, 60 * per_minute), (app["id"], outcome, hour)
        assert day[outcome] in (1439 * per_minute, 1440 * per_minute), (app["id"], outcome, day)
print("CHECK ok: 50 apps; app-01 last hour", apps[0]["last_hour"], "last day", apps[0]["last_day"], file=sys.stderr)
PY
wrk -t1 -c"$CONNECTIONS" -d"$DURATION" --latency -H "Authorization: Bearer $token" "$url" > "$work/wrk.txt"
rps=$(awk '/Requests\/sec/ { print $2 }' "$work/wrk.txt")
lat=$(awk '$1 ~ /^(50|90|99)%$/ { printf "%s=%s ", $1, $2 } $1 == "Latency" && NF > 4 { max = $4 } END { printf "max=%s", max }' "$work/wrk.txt")
errors=$(grep -E 'Non-2xx|Socket errors' "$work/wrk.txt" | tr '\n' ' ' || true)
store=sqlite; [ -n "${POSTGRES_URL:-}" ] && store=postgres
echo "console overview, $store, 50 apps, 7 days of counts, $CONNECTIONS connections: $rps requests/s, latency $lat $errors"
