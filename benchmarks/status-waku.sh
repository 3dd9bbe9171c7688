#!/usr/bin/env bash
# The Status push notification server, out of process: the provider emulators and a two-node emulated
# Waku network (`pushgate sandbox`), the gateway (`pushgate serve`, SQLite store, polling the sandbox's
# gateway node) and a Python load generator (benchmarks/status-load.py, building messages as status-go does)
# publishing through the other node are three processes on this machine's loopback.
#
#   benchmarks/status-waku.sh [BINARY] [COUNT] [RATE]
#   PERF=perf.data benchmarks/status-waku.sh …   # also records a perf profile of the gateway under load
#   POLL_MS=5 benchmarks/status-waku.sh …         # status.poll_interval_ms (default 100)
#   IO_THREADS=2 benchmarks/status-waku.sh …      # http.io_threads (default: one per core)
#   LOG_LEVEL=notice benchmarks/status-waku.sh …  # log.level (default: info, the gateway's default)
#   CLIENTS=100 benchmarks/status-waku.sh …        # registered clients (devices) the requests go to in turn
#   SLOW_FSYNC_US=2000 benchmarks/status-waku.sh … # each of the gateway's disk syncs 2 ms slower (benchmarks/slow-fsync.c)
#
# Prints the push requests published and delivered to the APNs emulator, the rate they were published at
# and delivered at end to end, the latency from publish to the emulator's receipt (p50, p99, over the last
# 1,000 deliveries the sandbox keeps), the disk's sync latency meanwhile (the gateway writes each request's
# hash to its store on the way: frontends-lib.sh's disk probe), the gateway's CPU per request and
# peak RSS, and the gateway's CPU while idle (30 s, polling continuously).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$(realpath "${1:-.build-release/release/pushgate}")
source benchmarks/frontends-lib.sh  # http_section, gateway_prefix, the disk probe
COUNT=${2:-5000}
RATE=${3:-1000}
PYTHON=${PUSHGATE_TEST_PYTHON:-.build-venv/bin/python}
work=$(mktemp -d /tmp/pushgate-status-bench.XXXXXX)
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; [ -n "${KEEP:-}" ] || rm -rf "$work"; }
trap cleanup EXIT

"$BIN" sandbox --directory "$work/sandbox" > "$work/sandbox.log" 2>&1 &
pids+=($!)
for _ in $(seq 200); do grep -q 'Deliveries:' "$work/sandbox.log" && break; sleep 0.1; done
deliveries=$(awk '/Deliveries:/ {print $2}' "$work/sandbox.log")
gateway_node=$(awk '/Waku REST nodes:/ {print $4}' "$work/sandbox.log")
client_node=$(awk '/Waku REST nodes:/ {print $8}' "$work/sandbox.log")
secret=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
echo "$secret" > "$work/status.key"
port=18400
{ cat "$work/sandbox/pushgate-sandbox.yaml"; cat <<YAML
$(http_section "$port")
log: {level: ${LOG_LEVEL:-info}}
database: {url: 'sqlite:$work/status.sqlite'}
status:
  waku_rest_url: $gateway_node
  identity_key_file: $work/status.key
  ios_app: demo.apns
  android_app: demo.fcm
  poll_interval_ms: ${POLL_MS:-100}
YAML
} > "$work/status.yaml"
gateway_prefix
"${gateway_prefix[@]}" "$BIN" serve --config "$work/status.yaml" > "$work/gateway.log" 2>&1 &
gateway=$!
pids+=($gateway)
for _ in $(seq 300); do grep -q 'subscribed to the Waku node' "$work/gateway.log" && break; sleep 0.1; done
key=$(grep -o 'public_key=0x[0-9a-f]*' "$work/gateway.log" | head -1 | cut -d= -f2 | sed 's/^0x//')

ticks=$(getconf CLK_TCK)
cpu() { awk '{print $14 + $15}' "/proc/$gateway/stat"; }
before=$(cpu)
if [ -n "${PERF:-}" ]; then perf record -F 499 -g -p "$gateway" -o "$PERF" > /dev/null 2>&1 & perf_pid=$!; fi
start_disk_probe
result=$("$PYTHON" benchmarks/status-load.py "$client_node" "$key" "$deliveries" "http://127.0.0.1:$port/metrics" "$COUNT" "$RATE")
after=$(cpu)
stop_disk_probe
if [ -n "${PERF:-}" ]; then kill -INT "$perf_pid"; wait "$perf_pid" || true; fi
echo "$result"
echo "disk syncs during the load: $disk_syncs (p50/p99/max of a probe's fsync every 100 ms)"
echo "gateway CPU per push request: $(echo "scale=3; ($after - $before) * 1000 / $ticks / $COUNT" | bc) ms (registration and building included)"
echo "gateway peak RSS: $(awk '/VmHWM/ {printf "%.1f MiB", $2 / 1024}' "/proc/$gateway/status")"
sleep 5
before=$(cpu)
sleep 30
after=$(cpu)
echo "gateway CPU while idle (30 s): $(echo "scale=2; ($after - $before) * 100 / $ticks / 30" | bc) % of a core"
