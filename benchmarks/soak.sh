#!/usr/bin/env bash
# A soak run: one gateway (`pushgate serve`, SQLite store, the default log level) takes the front ends'
# loads in turn, round after round, while its memory, file descriptors, threads and store are sampled
# after each round; at the end every accepted notification must have been delivered once. What it looks
# for is growth that a 10-second benchmark cannot show: a cache, table or buffer without a bound, a
# descriptor or thread that is never given back, a store that keeps what it delivered.
#
#   benchmarks/soak.sh [BINARY] [ROUNDS] [SECONDS]   # default 20 rounds of 6 s a case
#   CONNECTIONS=16 benchmarks/soak.sh …               # wrk's connections (default 16)
#   CASES="matrix-apns gorush-ios" benchmarks/soak.sh …  # only these cases (to find which one grows)
#   RELOAD_EVERY=2 benchmarks/soak.sh …               # also a configuration reload (SIGHUP) every 2 s,
#                                                     # each changing demo.apns and demo.fcm (their
#                                                     # in-flight limit), so their connections are remade
#   STORE=postgres benchmarks/soak.sh …               # a throw-away PostgreSQL cluster instead of SQLite;
#                                                     # its server processes' memory is sampled too
#
# A round runs, each for SECONDS with wrk (-t2, CONNECTIONS connections): Matrix → Web Push, Matrix →
# UnifiedPush (nginx as the push service and the distributor), Matrix → APNs (10,000 distinct pushkeys
# each), Nextcloud → FCM (batches of 100 for 10,000 registered devices) and gorush → APNs (one token a
# request, asynchronous, 10,000 distinct tokens). The provider side runs as in benchmarks/frontends-wrk.sh:
# `pushgate sandbox` and nginx, separate processes on loopback.
#
# Prints a line a round: requests answered 200 (and others) so far, the gateway's resident memory
# (VmRSS) and peak (VmHWM), open descriptors, threads, the store's size (SQLite's database and WAL files,
# or PostgreSQL's database), the outbox depth (`pushgate_outbox_depth`, which the gateway reads every
# 15 s: it may lag) and the PostgreSQL server's memory (Pss); then the deliveries checked against the
# answers (nginx's POSTs for Web Push and UnifiedPush, the gateway's delivered counters for APNs and FCM),
# and the memory of the last round against the second. Needs wrk, nginx, curl and python3 with
# `cryptography`, as frontends-wrk.sh (and PostgreSQL for STORE=postgres).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$(realpath "${1:-.build-release/release/pushgate}")
ROUNDS=${2:-20}
DURATION=${3:-6}
CONNECTIONS=${CONNECTIONS:-16}
source benchmarks/frontends-lib.sh
begin_run soak

start_sandbox
start_nginx
sleep 1.2  # nginx writes its access log once a second: its readiness probe's POST is counted before the runs
posts_before=$(nginx_posts)
port=$(free_port)
write_config soak "$port"
if [ "${STORE:-sqlite}" = postgres ]; then
  start_postgres
  sed -i "s|^database: .*|database: {url: '$pg_url'}|" "$work/soak.yaml"
fi
echo "gorush: {ios_app: demo.apns, android_app: demo.fcm, allow_unauthenticated: true}" >> "$work/soak.yaml"
start_gateway soak "$port" 300

cases=${CASES:-matrix-webpush matrix-unifiedpush matrix-apns nextcloud-fcm gorush-ios}
declare -A material url mode ok bad
for case in matrix-webpush matrix-unifiedpush matrix-apns nextcloud-fcm gorush-ios; do ok[$case]=0; bad[$case]=0; done
for case in $cases; do
  if [ "$case" = gorush-ios ]; then
    material[$case]="$work/gorush.material"
    printf '{"notifications":[{"platform":1,"tokens":["@DEVICE@"],"message":"Hello","topic":"im.pushgate.sandbox","data":{"chatId":"0x01"}}]}\n' > "${material[$case]}"
    for i in $(seq 0 9999); do printf 'a1%054d%08x\n' 0 "$i"; done > "${material[$case]}.devices"
    url[$case]="http://127.0.0.1:$port/api/push"
    mode[$case]=gorush
  else
    material[$case]=$(prepare_material "$case" "$port")
    mode[$case]=${case%%-*}
    url[$case]="http://127.0.0.1:$port"
    if [ "${mode[$case]}" = matrix ]; then url[$case]+=/_matrix/push/v1/notify; else url[$case]+=/notifications; fi
  fi
  ok[$case]=0
done

others=0
undelivered=0
store_bytes() {
  if [ "${STORE:-sqlite}" = postgres ]; then
    "$PG_BIN/psql" -h 127.0.0.1 -p "$pg_port" -U pushgate -d pushgate_bench -Atc "SELECT pg_database_size('pushgate_bench')"
  else
    cat "$work"/soak.sqlite* 2>/dev/null | wc -c
  fi
}
# The PostgreSQL server's processes' proportional resident memory (Pss: shared buffers counted once, not
# in every process that touched them), in KiB (0 with SQLite).
server_rss() {
  [ "${STORE:-sqlite}" = postgres ] || { echo 0; return; }
  for pid in $(pgrep -u postgres); do cat "/proc/$pid/smaps_rollup" 2>/dev/null; done | awk '$1 == "Pss:" { sum += $2 } END { printf "%d", sum }'
}
sample() { # ROUND
  local rss hwm fds threads depth
  rss=$(awk '/VmRSS/ { print $2 }' "/proc/$gateway/status")
  hwm=$(awk '/VmHWM/ { print $2 }' "/proc/$gateway/status")
  fds=$(ls "/proc/$gateway/fd" | wc -l)
  threads=$(ls "/proc/$gateway/task" | wc -l)
  depth=$(curl -s "http://127.0.0.1:$port/metrics" | awk '/^pushgate_outbox_depth\{/ { sum += $2 } END { printf "%d", sum }')
  local answered=0
  for case in $cases; do answered=$((answered + ok[$case])); done
  printf '%-5s %10d %7d %9.1f %9.1f %5d %7d %10.1f %6d %10.1f\n' "$1" "$answered" "$others" "$(echo "$rss / 1024" | bc -l)" \
    "$(echo "$hwm / 1024" | bc -l)" "$fds" "$threads" "$(echo "$(store_bytes) / 1048576" | bc -l)" "$depth" \
    "$(echo "$(server_rss) / 1024" | bc -l)"
  echo "$rss" >> "$work/rss"
}

echo "$(nproc) cores, $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'), store ${STORE:-sqlite}, $ROUNDS rounds of ${DURATION} s a case, wrk -t2 -c$CONNECTIONS"
printf '%-5s %10s %7s %9s %9s %5s %7s %10s %6s %10s\n' round "200s" other "RSS MiB" "peak MiB" fds threads "store MiB" outbox "server MiB"
sample start
if [ -n "${RELOAD_EVERY:-}" ]; then
  (
    limit=512
    while kill -0 "$gateway" 2>/dev/null; do
      limit=$((1025 - limit))  # 512, 513, 512, …
      sed -i -E "/^    inflight_request_limit: /d; s/^(    type: (apns|gcm))\$/\1\n    inflight_request_limit: $limit/" "$work/soak.yaml"
      kill -HUP "$gateway" 2>/dev/null || break
      sleep "$RELOAD_EVERY"
    done
  ) &
  pids+=($!)
fi
for round in $(seq "$ROUNDS"); do
  for case in $cases; do
    timeout $((DURATION + 60)) wrk -t2 -c"$CONNECTIONS" -d"${DURATION}s" --timeout 30s -s benchmarks/frontends.lua \
      "${url[$case]}" -- "${mode[$case]}" "${material[$case]}" "r$round" > "$work/wrk.txt"
    n=$(awk '$1 == "status" && $2 == 200 { print $3 }' "$work/wrk.txt")
    ok[$case]=$((ok[$case] + ${n:-0}))
    n=$(awk '$1 == "status" && $2 != 200 { sum += $3 } END { printf "%d", sum }' "$work/wrk.txt")
    bad[$case]=$((bad[$case] + n))
    others=$((others + n))
    n=$(awk '$1 == "undelivered" { print $2 }' "$work/wrk.txt")
    undelivered=$((undelivered + ${n:-0}))
  done
  sample "$round"
done

# Every answer of 200 is one delivery (a hundred for a Nextcloud batch); requests wrk cut off at the end of
# a run may add a few that it never counted.
posts=$((ok[matrix-webpush] + ok[matrix-unifiedpush]))
apns=$((ok[matrix-apns] + ok[gorush-ios]))
fcm=$((ok[nextcloud-fcm] * 100))
# The deliveries once they settle (`settle`, as frontends-wrk.sh waits for them); nginx's probe is subtracted.
got_posts=$(($(settle matrix-webpush "$port" $((posts + posts_before)) 120) - posts_before))
got_apns=$(settle matrix-apns "$port" "$apns" 120)
got_fcm=$(settle nextcloud-fcm "$port" "$fcm" 120)
if [ -n "${RELOAD_EVERY:-}" ]; then
  kill "${pids[-1]}" 2>/dev/null || true
  echo "reloads: $(curl -s "http://127.0.0.1:$port/metrics" | awk '/^pushgate_config_reloads_total\{/ { printf "%s %d; ", $1, $2 }')"
fi
sample end
problems=$(grep -ciE 'warning|error|critical' "$work/soak.log" || true)
# A run cut off at its end leaves at most CONNECTIONS requests whose answers wrk did not count.
cut=$((ROUNDS * CONNECTIONS))
verdict() { # DELIVERED ANSWERED RUNS_A_ROUND PER_REQUEST
  if [ "$1" -ge "$2" ] && [ "$1" -le $(($2 + $3 * cut * $4)) ]; then echo ok; else echo "NOT OK"; fi
}
echo "deliveries (at most $cut requests a case cut off uncounted): Web Push and UnifiedPush $got_posts for $posts answers" \
  "($(verdict "$got_posts" "$posts" 2 1)); APNs $got_apns for $apns ($(verdict "$got_apns" "$apns" 2 1));" \
  "FCM $got_fcm for $fcm ($(verdict "$got_fcm" "$fcm" 1 100)); answers not 200: $others; 200s that did not say all" \
  "delivered: $undelivered; log lines at warning or worse: $problems"
python3 - "$work/rss" <<'PY'
import sys
rss = [int(line) for line in open(sys.argv[1]) if line.strip()]
# rss[0] is before the first round, rss[1] after it; rss[-1] after the deliveries settled.
if len(rss) >= 4:
    second, last = rss[2], rss[-2]
    print(f"resident memory after round 2: {second / 1024:.1f} MiB; after the last round: {last / 1024:.1f} MiB "
          f"({(last - second) / 1024:+.1f} MiB); highest after any round: {max(rss[1:-1]) / 1024:.1f} MiB")
PY
if [ "$others" -gt 0 ]; then
  echo "answers not 200 by case:$(for case in $cases; do printf ' %s %d' "$case" "${bad[$case]}"; done)"
fi
[ "$problems" -eq 0 ] || { echo "the gateway logged warnings or errors; the first:" >&2; grep -iE 'warning|error|critical' "$work/soak.log" | head -3 >&2; }
