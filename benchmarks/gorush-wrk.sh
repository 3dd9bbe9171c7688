#!/usr/bin/env bash
# gorush's POST /api/push under wrk, out of process: the provider emulators (`pushgate sandbox`), the
# gateway (`pushgate serve`, SQLite store) and wrk are three processes on this machine's loopback.
#
#   benchmarks/gorush-wrk.sh [BINARY] [DURATION] [CONNECTIONS]
#   MODES="async" SHAPES="ios1" benchmarks/gorush-wrk.sh …   # a subset
#   PROFILE=/tmp/gorush MODES=async SHAPES=ios1 benchmarks/gorush-wrk.sh …   # perf record of the gateway during wrk
#   RATE=100 SHAPES=android100 MODES=async benchmarks/gorush-wrk.sh …   # an offered load instead of a closed loop
#   WORK_DIR=/dev/shm …   # the database (and logs) on tmpfs: no fsync wait, to see what the disk adds
#   SLOW_FSYNC_US=2000 …  # each of the gateway's disk syncs 2 ms slower (benchmarks/slow-fsync.c), as a disk slower to flush
#   IO_THREADS=2 …        # the gateway's http.io_threads (default: the gateway's own, one per core)
#   BENCH_LOG_LEVEL=warning …   # the gateway's log.level (default: info, the gateway's own default)
#   BENCH_LOG_FORMAT=json …     # the gateway's log.format (default: text, the gateway's own default)
#   DEVICES=100 …               # how many distinct devices the tokens cycle through (default 10,000)
#   DEAD=30 SHAPES=android100 …   # 30 of the 100 Android tokens are unregistered (FCM answers 404
#                                 # UNREGISTERED): each is recorded as invalid; "delivered" then counts the rest
#
# Without RATE each connection sends its next request as soon as the answer arrives (wrk's closed loop):
# the figures are the most the gateway answers. In async mode that also means it accepts far more tokens
# a second than it can deliver, and the outbox's backlog grows for the whole run, so the answers' latency
# is then the latency of a machine busy delivering that backlog. With RATE (requests a second, all
# connections together) each connection waits an exponentially distributed pause (mean CONNECTIONS / RATE
# seconds) after each answer, so requests arrive as from many independent senders, at about RATE a
# second (a little less: the answer's own time adds to each pause; the printed requests/s is what was
# sent): the latency of the answers at a load the gateway sustains.
#
# For each mode (async, sync) and shape (ios1: one iOS token per notification; android100: one Android
# notification with 100 tokens) it prints: requests/s and latency percentiles of the answers (wrk),
# tokens accepted (wrk's answered requests × tokens per request), tokens delivered per second (from wrk's start until the emulators have every token,
# read from the gateway's pushgate_deliveries_total), the gateway's peak RSS (VmHWM), and the CPU time per delivered
# token of the gateway and of the emulators' process, from wrk's start until the last delivery (utime + stime),
# and of wrk (/usr/bin/time); from the three, the rate at which they together would keep every core busy;
# and the disk's sync latency during wrk (p50/p99/max of a probe's fsync every 100 ms, frontends-lib.sh),
# which an async answer's latency follows: it waits for the outbox entry's fsync; and the machine's
# reference speed before wrk and after the last delivery (frontends-lib.sh's machine_reference), and the
# share of the machine's CPU time the hypervisor stole during wrk (steal_share).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$(realpath "${1:-.build-release/release/pushgate}")
DURATION=${2:-20s}
CONNECTIONS=${3:-32}
source benchmarks/frontends-lib.sh  # begin_run, start_sandbox, cpu_ticks, gateway_prefix; this script's own metric_sum below replaces the library's
begin_run gorush-bench

start_sandbox

# Tokens cycle through DEVICES distinct devices (default 10,000), as a back end's many users: ios1 sends
# token number n to request n (from a random start), android100 sends tokens 100·k … 100·k + 99 in request k (the first DEAD of
# each request unregistered), so no per-device cache answers every request.
devices=${DEVICES:-10000}
cat > "$work/ios1.lua" <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local sent = nil
function request()
  sent = (sent or math.random(0, $devices - 1)) + 1
  local token = "a1" .. string.rep("0", 54) .. string.format("%08x", sent % $devices)
  return wrk.format(nil, nil, nil, '{"notifications":[{"platform":1,"tokens":["' .. token .. '"],"message":"Hello","topic":"im.pushgate.sandbox","data":{"chatId":"0x01"}}]}')
end
LUA
cat > "$work/android100.lua" <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local bodies, blocks, sent = {}, math.max(1, math.floor($devices / 100)), nil
function request()
  sent = (sent or math.random(0, blocks - 1)) + 1
  local block = sent % blocks
  if not bodies[block] then
    local tokens = {}
    for i = 0, 99 do
      local name = i < ${DEAD:-0} and "unregistered-" or "bench-token-"
      tokens[#tokens + 1] = '"' .. name .. (block * 100 + i) .. '"'
    end
    bodies[block] = '{"notifications":[{"platform":2,"tokens":[' .. table.concat(tokens, ",") .. '],"title":"Hi","message":"Hello","data":{"chatId":"0x01"}}]}'
  end
  return wrk.format(nil, nil, nil, bodies[block])
end
LUA
if [ -n "${RATE:-}" ]; then
  for shape in ios1 android100; do
    cat >> "$work/$shape.lua" <<LUA
local mean_pause_ms = 1000 * $CONNECTIONS / $RATE
function setup(thread) thread:set("seed", math.random(1, 2147483647)) end
function init(args) math.randomseed(seed) end
function delay() return -mean_pause_ms * math.log(1 - math.random()) end
LUA
  done
fi

metric_sum() { # the sum of a counter over its label sets
  curl -s "http://127.0.0.1:$port/metrics" | awk -v name="$1" -v filter="$2" '$1 ~ "^"name"{" && $1 ~ filter { sum += $2 } END { printf "%d", sum }'
}

port=18300
for mode in ${MODES:-async sync}; do
  for shape in ${SHAPES:-ios1 android100}; do
    port=$((port + 1))
    sync=false; [ "$mode" = sync ] && sync=true
    { cat "$work/sandbox/pushgate-sandbox.yaml"; cat <<YAML
$(http_section "$port")
log: {level: ${BENCH_LOG_LEVEL:-info}${BENCH_LOG_FORMAT:+, format: $BENCH_LOG_FORMAT}}
database: {url: 'sqlite:$work/$mode-$shape.sqlite'}
gorush: {ios_app: demo.apns, android_app: demo.fcm, allow_unauthenticated: true, sync: $sync}
YAML
    } > "$work/$mode-$shape.yaml"
    gateway_prefix
    "${gateway_prefix[@]}" "$BIN" serve --config "$work/$mode-$shape.yaml" > "$work/$mode-$shape.log" 2>&1 &
    gateway=$!
    pids+=($gateway)
    for _ in $(seq 200); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
    gateway_ticks=$(cpu_ticks "$gateway"); sandbox_ticks=$(cpu_ticks "$sandbox")
    [ -n "${PROFILE:-}" ] && { perf record -F 999 -g -p "$gateway" -o "$PROFILE-$mode-$shape.data" > /dev/null 2>&1 & profiler=$!; }
    reference_before=$(machine_reference)
    steal_before=$(steal_ticks)
    start=$(date +%s.%N)
    start_disk_probe
    /usr/bin/time -f '%U %S' -o "$work/wrk-cpu.txt" \
      wrk -t2 -c"$CONNECTIONS" -d"$DURATION" --latency -s "$work/$shape.lua" "http://127.0.0.1:$port/api/push" > "$work/wrk.txt"
    stop_disk_probe
    stolen=$(steal_share "$steal_before" "$(steal_ticks)")
    [ -n "${PROFILE:-}" ] && { kill -INT "$profiler"; wait "$profiler" || true; }
    per_request=1; [ "$shape" = android100 ] && per_request=100
    accepted=$(( $(awk '/requests in/ { print $1 }' "$work/wrk.txt") * per_request ))
    # Wait until every accepted token has an outcome (delivered, or another outcome if any), at most
    # about ten minutes: the closed loop's async backlog takes minutes to deliver.
    last=$start
    for _ in $(seq 2400); do
      done_count=$(metric_sum pushgate_deliveries_total 'app="demo\\.(apns|fcm)"')
      last=$(date +%s.%N)
      [ "$done_count" -ge "$accepted" ] && break
      sleep 0.25
    done
    [ "$done_count" -ge "$accepted" ] || echo "not every accepted token has an outcome: $done_count of $accepted" >&2
    delivered=$(metric_sum pushgate_deliveries_total 'outcome="delivered"')
    gateway_ticks=$(( $(cpu_ticks "$gateway") - gateway_ticks )); sandbox_ticks=$(( $(cpu_ticks "$sandbox") - sandbox_ticks ))
    rss=$(awk '/VmHWM/ { print $2 }' "/proc/$gateway/status")
    kill "$gateway"; wait "$gateway" 2>/dev/null || true
    reference="$reference_before/$(machine_reference)"
    rps=$(awk '/Requests\/sec/ { print $2 }' "$work/wrk.txt")
    lat=$(awk '$1 ~ /^(50|90|99)%$/ { printf "%s=%s ", $1, $2 }' "$work/wrk.txt")
    errors=$(grep -E 'Non-2xx|Socket errors' "$work/wrk.txt" | tr '\n' ' ' || true)
    python3 - "$mode" "$shape" "$rps" "$lat" "$accepted" "$delivered" "$start" "$last" "$rss" "$errors" \
      "$gateway_ticks" "$sandbox_ticks" "$(getconf CLK_TCK)" "$(cat "$work/wrk-cpu.txt")" "$(nproc)" "$disk_syncs" "$reference" "$stolen" <<'PY'
import sys
mode, shape, rps, lat, accepted, delivered, start, last, rss, errors, gateway, sandbox, hz, wrk_cpu, cores, disk, reference, stolen = sys.argv[1:]
seconds = float(last) - float(start)
per_token = lambda ticks: 1000 * int(ticks) / int(hz) / max(int(delivered), 1)
wrk_ms = sum(float(x) for x in wrk_cpu.split()[-2:]) * 1000 / max(int(delivered), 1)
# The rate at which the gateway, the emulators and wrk together would keep every core busy.
all_busy = int(cores) * 1000 / (per_token(gateway) + per_token(sandbox) + wrk_ms)
print(f"{mode:5} {shape:10} requests/s {float(rps):8.0f}  latency {lat} accepted {int(accepted):7d} delivered {int(delivered):7d} "
      f"in {seconds:5.1f} s = {int(delivered) / seconds:7.0f} tokens/s  peak RSS {int(rss) / 1024:5.1f} MiB  "
      f"CPU ms/token gateway {per_token(gateway):.3f} emulators {per_token(sandbox):.3f} wrk {wrk_ms:.3f} "
      f"(all {cores} cores busy at {all_busy:,.0f} tokens/s) disk syncs during wrk {disk}  machine reference {reference}  stolen during wrk {stolen} {errors}")
PY
  done
done
