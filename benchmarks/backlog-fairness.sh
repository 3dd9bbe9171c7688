#!/usr/bin/env bash
# One app's fresh notification behind another app's outbox backlog, out of process: the provider
# emulators (`pushgate sandbox`) and the gateway (`pushgate serve`) on this machine's loopback, on SQLite
# and on PostgreSQL (a throw-away cluster started as scripts/test starts one).
#
#   benchmarks/backlog-fairness.sh [BINARY] [BACKLOG]
#   STORES=sqlite benchmarks/backlog-fairness.sh …   # one store only (default: "sqlite postgres")
#   FRESH=front-end benchmarks/backlog-fairness.sh …  # B is another front end of app A (default: FRESH=app)
#
# For each store: the gateway starts once to create the schema and stops; BACKLOG one-token entries of
# demo.fcm (app A, due a minute ago, oldest first) and then one entry of demo.apns (app B, due now) are
# written straight into the outbox, as entries queued while no worker ran (another instance's, or this
# one's before a restart): the worker claims them from the store, nothing is handed over in memory. Then
# the gateway starts again and its deliveries are read from its metrics (every 20 ms until B's entry is
# delivered, then every 250 ms). With FRESH=front-end, A's backlog is recorded as queued by the gorush front
# end and B is one entry of demo.fcm itself, recorded as queued by the nextcloud front end, for a token the
# FCM emulator answers as unregistered (so its delivery shows as demo.fcm's one invalid_token outcome). It
# prints:
#   - B's time: from the gateway's start (exec) and from its first /health answer until B is delivered,
#     and how many of A's entries were delivered before it;
#   - A's drain: from the first /health answer until all BACKLOG are delivered, in entries a second.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$(realpath "${1:-.build-release/release/pushgate}")
BACKLOG=${2:-50000}
source benchmarks/frontends-lib.sh  # begin_run, start_sandbox, start_postgres, http_section, free_port, start_gateway, stop_gateway, metric_sum
begin_run backlog-fairness

now_ms() { date +%s%3N; }

# The backlog: BACKLOG entries of demo.fcm due a minute ago (one millisecond apart, oldest first), then one
# of demo.apns due now. The payloads are stored notifications as the gateway writes them.
backlog_sql() { # sqlite|postgres
  local now; now=$(now_ms)
  local fcm='{"kind":"alert","payload":{"data":{"room_id":"!r:example.org","unread":"2"}},"priority":"high"}'
  local apns='{"kind":"alert","payload":{"aps":{"alert":"fresh"}},"priority":"high"}'
  # B: another app's entry, or (FRESH=front-end) one of A's app queued by another front end.
  local b_app=demo.apns b_token b_payload=$apns a_front_end=gorush b_front_end=gorush
  b_token=$(printf 'a1%.0s' $(seq 32))
  if [ "${FRESH:-app}" = front-end ]; then b_app=demo.fcm; b_token=unregistered-fresh; b_payload=$fcm; b_front_end=nextcloud; fi
  case $1 in
    sqlite) cat <<SQL
BEGIN;
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < $BACKLOG)
INSERT INTO outbox (app_id, front_end, push_token, payload, not_before, created_at)
  SELECT 'demo.fcm', '$a_front_end', 'bench-token-' || i, CAST('$fcm' AS BLOB), $now - 60000 + i * 60000 / $BACKLOG, $now FROM n;
INSERT INTO outbox (app_id, front_end, push_token, payload, not_before, created_at)
  VALUES ('$b_app', '$b_front_end', '$b_token', CAST('$b_payload' AS BLOB), $now, $now);
COMMIT;
SQL
    ;;
    postgres) cat <<SQL
BEGIN;
INSERT INTO outbox (app_id, front_end, push_token, payload, not_before, created_at)
  SELECT 'demo.fcm', '$a_front_end', 'bench-token-' || i, convert_to('$fcm', 'UTF8'), $now - 60000 + i::bigint * 60000 / $BACKLOG, $now
  FROM generate_series(0, $BACKLOG - 1) AS i;
INSERT INTO outbox (app_id, front_end, push_token, payload, not_before, created_at)
  VALUES ('$b_app', '$b_front_end', '$b_token', convert_to('$b_payload', 'UTF8'), $now, $now);
COMMIT;
ANALYZE outbox;
SQL
    ;;
  esac
}

start_sandbox

for store in ${STORES:-sqlite postgres}; do
  port=$(free_port)
  case $store in
    sqlite) url="sqlite:$work/backlog.sqlite" ;;
    postgres) start_postgres; url=$pg_url ;;
  esac
  { cat "$work/sandbox/pushgate-sandbox.yaml"; cat <<YAML
$(http_section "$port")
log: {level: warning}
database: {url: '$url'}
YAML
  } > "$work/$store.yaml"
  # The schema, then the backlog, with no gateway running.
  start_gateway "$store" "$port" 300
  stop_gateway
  case $store in
    sqlite) backlog_sql sqlite | sqlite3 "$work/backlog.sqlite" ;;
    postgres) backlog_sql postgres | "$PG_BIN/psql" -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$pg_port" -U pushgate -d pushgate_bench ;;
  esac

  started=$(date +%s.%N)
  "$BIN" serve --config "$work/$store.yaml" > "$work/$store-run.log" 2>&1 &
  gateway=$!
  pids+=($gateway)
  up=""
  b_at=""; a_before_b=0; a_done_at=""
  for _ in $(seq 30000); do
    kill -0 "$gateway" 2>/dev/null || { echo "the gateway stopped:" >&2; tail -5 "$work/$store-run.log" >&2; exit 1; }
    if [ -z "$up" ]; then
      curl -sf "http://127.0.0.1:$port/health" > /dev/null 2>&1 && up=$(date +%s.%N)
      sleep 0.02
      continue
    fi
    a=$(metric_sum "$port" pushgate_deliveries_total 'app="demo.fcm"' 'outcome="delivered"')
    if [ -z "$b_at" ]; then
      if [ "${FRESH:-app}" = front-end ]; then
        b=$(metric_sum "$port" pushgate_deliveries_total 'app="demo.fcm"' 'outcome="invalid_token"')
      else
        b=$(metric_sum "$port" pushgate_deliveries_total 'app="demo.apns"' 'outcome="delivered"')
      fi
      if [ "$b" -ge 1 ]; then b_at=$(date +%s.%N); a_before_b=$a; fi
    fi
    if [ "$a" -ge "$BACKLOG" ]; then a_done_at=$(date +%s.%N); break; fi
    if [ -z "$b_at" ]; then sleep 0.02; else sleep 0.25; fi
  done
  [ -n "$b_at" ] && [ -n "$a_done_at" ] || { echo "$store: not every entry was delivered in time" >&2; exit 1; }
  stop_gateway
  python3 - "$store" "$BACKLOG" "$started" "$up" "$b_at" "$a_before_b" "$a_done_at" "${FRESH:-app}" <<'PY'
import sys
store, backlog, started, up, b_at, a_before_b, a_done, fresh = sys.argv[1:]
started, up, b_at, a_done = map(float, (started, up, b_at, a_done))
b = "nextcloud's entry of demo.fcm" if fresh == "front-end" else "demo.apns's entry"
a = "demo.fcm (gorush)" if fresh == "front-end" else "demo.fcm"
print(f"{store:8} backlog {int(backlog):,} of {a}: {b} delivered {b_at - started:6.3f} s after the start, "
      f"{b_at - up:6.3f} s after the first /health answer, behind {int(a_before_b):,} of demo.fcm's; "
      f"demo.fcm drained in {a_done - up:6.2f} s = {int(backlog) / (a_done - up):8,.0f} entries/s")
PY
done
