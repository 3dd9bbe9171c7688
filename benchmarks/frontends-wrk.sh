#!/usr/bin/env bash
# The Matrix and Nextcloud front ends under wrk, out of process: the provider side (`pushgate sandbox`'s
# emulators, and nginx as a counting Web Push service), the gateway (`pushgate serve`, SQLite store,
# warnings only) and wrk are separate processes on this machine's loopback.
#
#   benchmarks/frontends-wrk.sh [BINARY] [DURATION] [CONNECTIONS]
#   CASES="matrix-apns nextcloud-fcm" benchmarks/frontends-wrk.sh …   # a subset
#   IO_THREADS=2 benchmarks/frontends-wrk.sh …   # the gateway's http.io_threads (default: one per core)
#   COMPUTE_THREADS=2 benchmarks/frontends-wrk.sh …   # its http.compute_threads (default: half the cores)
#   BENCH_LOG_LEVEL=warning benchmarks/frontends-wrk.sh …   # the gateway's log.level (default: info, the
#                                                             # gateway's own default, which logs each request)
#   BENCH_LOG_FORMAT=json benchmarks/frontends-wrk.sh …   # the gateway's log.format (default: text)
#   DEVICES=1 benchmarks/frontends-wrk.sh …   # how many devices each Matrix case cycles through (default 10,000)
#
# Cases (each with a fresh gateway and store):
#   matrix-webpush  POST /_matrix/push/v1/notify, Synapse's full format, one Web Push device a request (fresh
#                   P-256 subscriptions whose endpoints are at nginx, DEVICES of them in turn), a unique event
#                   id per request: real aes128gcm encryption and VAPID, one POST to nginx per notification
#   matrix-apns     the same with one APNs device a request (demo.apns, DEVICES tokens in turn), delivered to
#                   the APNs emulator
#   matrix-unifiedpush  the same with one UnifiedPush device a request (demo.unifiedpush, DEVICES endpoints at
#                   nginx as distributor; `?up=1` kept): the notification without devices, posted as it
#                   is (no encryption), one POST to nginx per notification. Targets: 15,000 requests/s and
#                   p99 ≤ 10 ms at 32 connections on the 2-core machine
#   nextcloud-fcm   POST /notifications, batches of 100 signed entries for 1,000 devices registered first
#   nextcloud-apns  with POST /devices; wrk cycles through 64 prepared batches (Nextcloud has no duplicate
#                   suppression, so a repeated batch is delivered again)
# A 2-second warm-up at 4 connections precedes each measured run. For each case it prints requests/s
# (and notifications/s), wrk's p50/p90/p99, the gateway's CPU time (utime + stime from /proc/PID/stat,
# read just before and after wrk) per request and per notification, the CPU time of the provider side
# (sandbox and nginx, from /proc) and of wrk (/usr/bin/time) per request, the rate at which all of them
# together would keep every core busy, the gateway's peak RSS (VmHWM), the answers
# that were not 2xx, the machine's reference speed just before and just after the run
# (`machine_reference`: P-256 ECDH/s on one core, which drops in a shared machine's slow spells), the share
# of the machine's CPU time the hypervisor stole during wrk (`steal_share`, from /proc/stat), and a CHECK that each 200 became exactly one delivery per notification: nginx's
# logged POSTs for Web Push and UnifiedPush, the gateway's pushgate_deliveries_total{outcome="delivered"} for APNs and
# FCM, after waiting (bounded) for the count to settle. wrk counts only requests whose answer arrived, so
# up to CONNECTIONS requests cut off at the end may be delivered too: that difference is reported; fewer
# deliveries than 200s, or more than that margin, is a MISMATCH.
#
# Needs wrk, nginx, curl and python3 with `cryptography` (Debian: apt-get install -y wrk nginx). The
# per-case lines go to stderr, a Markdown table of them to stdout. Helpers: frontends-lib.sh (processes,
# configuration, counters), frontends.py (keys, device registration, bodies), frontends.lua (wrk).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$(realpath "${1:-.build-release/release/pushgate}")
DURATION=${2:-10s}
CONNECTIONS=${3:-32}
CASES=${CASES:-matrix-webpush matrix-apns matrix-unifiedpush nextcloud-fcm nextcloud-apns}
source benchmarks/frontends-lib.sh
begin_run frontends-bench

start_sandbox
start_nginx
rows=()

for case in $CASES; do
  port=$(free_port)
  write_config "$case" "$port"
  start_gateway "$case" "$port" 300
  material=$(prepare_material "$case" "$port")
  mode=${case%%-*}
  url="http://127.0.0.1:$port"; [ "$mode" = matrix ] && url+=/_matrix/push/v1/notify || url+=/notifications
  lua=benchmarks/frontends.lua

  # Warm-up (connections, provider tokens, caches), then the baseline of the delivery count.
  timeout 60 wrk -t2 -c4 -d2s --timeout 30s -s "$lua" "$url" -- "$mode" "$material" warm > "$work/warm.txt"
  base=$(settle "$case" "$port" 0 60)

  reference_before=$(machine_reference)
  ticks_before=$(cpu_ticks "$gateway"); kernel_before=$(kernel_ticks "$gateway"); provider_before=$(provider_ticks); steal_before=$(steal_ticks)
  /usr/bin/time -f '%U %S' -o "$work/wrk-cpu.txt" \
    timeout 3600 wrk -t2 -c"$CONNECTIONS" -d"$DURATION" --timeout 30s --latency -s "$lua" "$url" -- "$mode" "$material" run > "$work/wrk.txt"
  ticks_after=$(cpu_ticks "$gateway"); kernel_after=$(kernel_ticks "$gateway"); provider_after=$(provider_ticks)
  stolen=$(steal_share "$steal_before" "$(steal_ticks)")
  reference="$reference_before/$(machine_reference)"

  n=$(per_request "$case")
  ok=$(awk '$1 == "status" && $2 == 200 { print $3 }' "$work/wrk.txt"); ok=${ok:-0}
  total=$(settle "$case" "$port" $((base + ok * n)) 120)
  rss=$(awk '/VmHWM/ { print $2 }' "/proc/$gateway/status")
  stop_gateway
  problems=$(grep -ciE 'warning|error|critical' "$work/$case.log" || true)

  row=$(python3 - "$case" "$work/wrk.txt" "$n" "$ok" "$((total - base))" "$ticks_before" "$ticks_after" "$(getconf CLK_TCK)" \
    "$rss" "$CONNECTIONS" "$problems" "$((kernel_after - kernel_before))" "$((provider_after - provider_before))" \
    "$(cat "$work/wrk-cpu.txt")" "$(nproc)" "$reference" "$stolen" <<'PY'
import re, sys
case, wrk_file, n, ok, delivered, t0, t1, hz, rss, connections, problems, kernel, provider, wrk_cpu, cores, reference, stolen = sys.argv[1:]
reference = " / ".join(f"{int(x):,}" if x.isdigit() else x for x in reference.split("/"))
n, ok, delivered, connections = int(n), int(ok), int(delivered), int(connections)
text = open(wrk_file).read()
requests = int(re.search(r"(\d+) requests in", text).group(1))
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
def ms(value):
    number, unit = re.match(r"([\d.]+)(\w+)", value).groups()
    return float(number) * {"us": 0.001, "ms": 1, "s": 1000, "m": 60000}[unit]
lat = {p: ms(re.search(rf"^\s+{p}%\s+(\S+)", text, re.M).group(1)) for p in (50, 90, 99)}
statuses = dict((int(s), int(c)) for s, c in re.findall(r"^status (\d+) (\d+)$", text, re.M))
non2xx = sum(c for s, c in statuses.items() if not 200 <= s < 300)
socket = re.search(r"Socket errors:.*", text)
undelivered = int(re.search(r"^undelivered (\d+)$", text, re.M).group(1))
cpu_ms = (int(t1) - int(t0)) * 1000 / int(hz)
provider_ms = int(provider) * 1000 / int(hz)
wrk_ms = sum(float(x) for x in wrk_cpu.split()[-2:]) * 1000
# What the other processes of the run cost a request, and so the rate at which every process together
# would keep all of the machine's cores busy: with that load generator and provider side, no gateway
# answers faster than that.
all_busy = int(cores) * 1000 / ((cpu_ms + provider_ms + wrk_ms) / requests)
expected = ok * n
difference = delivered - expected
if difference == 0:
    check = f"ok: {delivered} deliveries for {ok} answers of 200"
elif 0 < difference <= connections * n:
    check = f"ok: {delivered} deliveries for {ok} answers of 200, +{difference} from requests cut off at the end"
else:
    check = f"*** MISMATCH ***: {delivered} deliveries for {ok} answers of 200 × {n} = {expected} ({difference:+d})"
others = " ".join(f"{s}:{c}" for s, c in sorted(statuses.items()) if s != 200)
print(f"{case}: {rps:,.0f} requests/s" + (f" = {rps * n:,.0f} notifications/s" if n > 1 else "")
      + f"; p50 {lat[50]:.2f} / p90 {lat[90]:.2f} / p99 {lat[99]:.2f} ms; gateway CPU {cpu_ms / requests:.3f} ms/request"
      + (f", {cpu_ms / requests / n:.4f} ms/notification" if n > 1 else "")
      + (f" ({100 * int(kernel) / (int(t1) - int(t0)):.0f} % of it in the kernel)" if int(t1) > int(t0) else "")
      + f"; provider side {provider_ms / requests:.3f}, wrk {wrk_ms / requests:.3f} ms/request"
      + f" (every process's CPU fills {cores} cores at {all_busy:,.0f} requests/s)"
      + f"; peak RSS {int(rss) / 1024:.1f} MiB; {requests} requests, non-2xx {non2xx}" + (f" ({others})" if others else "")
      + (f"; {socket.group(0)}" if socket else "") + f"; 200s not all delivered {undelivered}; log warnings/errors {problems}"
      + f"; machine reference before/after {reference} P-256 ECDH/s; CPU time stolen by the hypervisor during wrk {stolen}",
      file=sys.stderr)
print(f"CHECK {case}: {check}", file=sys.stderr)
print(f"| {case} | {rps:,.0f} | " + (f"{rps * n:,.0f}" if n > 1 else "") + f" | {lat[50]:.2f} / {lat[90]:.2f} / {lat[99]:.2f} | "
      f"{cpu_ms / requests:.3f} | " + (f"{cpu_ms / requests / n:.4f}" if n > 1 else "")
      + f" | {provider_ms / requests:.3f} / {wrk_ms / requests:.3f} | {all_busy:,.0f} | {int(rss) / 1024:.1f} MiB | {non2xx} | "
      + ("ok" if check.startswith("ok") else "MISMATCH") + f" ({difference:+d}) | {reference} | {stolen} |")
PY
  )
  rows+=("$row")
  if [ "$problems" -gt 0 ]; then
    echo "  the gateway logged $problems warnings or errors; the first:" >&2
    grep -iE 'warning|error|critical' "$work/$case.log" | head -3 | cut -c1-300 >&2
  fi
done

echo
echo "$(nproc) cores, $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD), wrk -t2 -c$CONNECTIONS -d$DURATION"
echo "| case | requests/s | notifications/s | p50 / p90 / p99 ms | CPU ms/request | CPU ms/notification | provider side / wrk CPU ms/request | all cores busy at (requests/s) | peak RSS | non-2xx | check (deliveries − 200s × n) | machine reference, P-256 ECDH/s before/after | stolen |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
