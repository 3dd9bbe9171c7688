#!/usr/bin/env bash
# Instructions per request (callgrind's Ir) of one front-end case, for comparing commits on a noisy
# machine: unlike requests/s or CPU time, the count barely moves between runs.
#
#   benchmarks/callgrind.sh [BINARY] [CASE] [COUNT]     # CASE: matrix-webpush (default), matrix-apns,
#                                                       # nextcloud-fcm, nextcloud-apns, gorush-ios (one
#                                                       # iOS token, async), gorush-android100 (one
#                                                       # notification for 100 FCM tokens, async);
#                                                       # COUNT default 2000
#
# The provider side runs natively as in benchmarks/frontends-wrk.sh (`pushgate sandbox`, nginx for Web
# Push); only the gateway runs under `valgrind --tool=callgrind`, with instrumentation off until warm-up is
# done (`--instr-atstart=no`). A small Python client (benchmarks/frontends.py send: 4 threads, keep-alive)
# sends 200 warm-up requests, then the counters are switched on and zeroed (`callgrind_control -i on`,
# `-z`), exactly COUNT requests are sent, and the counters are dumped (`callgrind_control -d`). The result
# is that dump's total Ir divided by COUNT: everything the gateway's threads executed in that window,
# background work (timers, the outbox) included. Valgrind runs the gateway some 50 times slower and on one
# thread at a time, so every deadline here is generous. For gorush (answered before delivery) the dump waits
# until every measured request's tokens were delivered. Nextcloud batches count as one request each (100
# notifications).
#
# MEASURE=sandbox counts the provider side's process (`pushgate sandbox`: the APNs, FCM and Web Push
# emulators) instead, the gateway then running natively: what the emulators cost a request, which the
# wall-clock benchmarks' throughput includes (they share the machine's cores).
#
# KEEP_DUMP=FILE keeps the measured dump for `callgrind_annotate --inclusive=yes FILE`.
#
# Needs valgrind, objcopy, cc, nginx, curl and python3 with `cryptography`. Repeated runs of the same
# binary on an idle machine agree to within about 1-3% (per-process hash seeds, and work the gateway does on
# timers); on a busy machine the gateway gets less CPU, runs more timer work per request and counts more.
# Compare binaries back to back on an idle machine.
set -euo pipefail
cd "$(dirname "$0")/.."
source benchmarks/frontends-lib.sh
fixed_count_arguments "$@"
begin_run callgrind

MEASURE=${MEASURE:-gateway}
port=$(free_port)
# Two work-arounds for Valgrind 3.19 (Debian 12): it gives up on the DWARF 5 debug information Swift 6.3
# writes ("Possibly corrupted debuginfo file"), so the measured process runs from a copy without it (the symbol
# table stays, the code is the same); and it dies in libdispatch's sigsuspend() unless the mask is
# writable, which benchmarks/valgrind-sigsuspend.c (LD_PRELOAD) sees to.
objcopy --strip-debug "$BIN" "$work/pushgate-nodebug"
cc -shared -fPIC -O2 -o "$work/sigsuspend.so" benchmarks/valgrind-sigsuspend.c -ldl
under_valgrind=(env LD_PRELOAD="$work/sigsuspend.so"
  valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$work/callgrind.out" --log-file="$work/valgrind.log")
# Up to 5 minutes to start under valgrind.
case $MEASURE in
  gateway)
    start_sandbox
    start_nginx
    write_config "$CASE" "$port"
    GATEWAY_BIN="$work/pushgate-nodebug" start_gateway "$CASE" "$port" 3000 "${under_valgrind[@]}"
    measured=$gateway ;;
  sandbox)
    SANDBOX_BIN="$work/pushgate-nodebug" start_sandbox 3000 "${under_valgrind[@]}"
    start_nginx
    write_config "$CASE" "$port"
    start_gateway "$CASE" "$port" 300
    measured=$sandbox ;;
  *) echo "MEASURE is gateway or sandbox" >&2; exit 2 ;;
esac
material=$(prepare_material "$CASE" "$port")

echo "warm-up: $WARMUP requests" >&2
SEND_DEADLINE=1800 timeout 2000 python3 benchmarks/frontends.py send "$port" "$CASE" "$material" "$WARMUP" warm >&2
timeout 300 callgrind_control -i on "$measured" > /dev/null 2>&1
timeout 300 callgrind_control -z "$measured" > /dev/null 2>&1
echo "measured: $COUNT requests" >&2
status=0
SEND_DEADLINE=7200 timeout 7400 python3 benchmarks/frontends.py send "$port" "$CASE" "$material" "$COUNT" run >&2 || status=$?
# gorush answers before it delivers (async): the count includes the deliveries of every measured request.
case $CASE in gorush-*) settle "$CASE" "$port" $(((WARMUP + COUNT) * $(per_request "$CASE"))) 1800 > /dev/null ;; esac
timeout 300 callgrind_control -d "$measured" > /dev/null 2>&1
dump=""
for _ in $(seq 600); do  # the dump is written by the gateway's process; wait for it (at most a minute)
  dump=$(ls "$work"/callgrind.out.* 2>/dev/null | head -1 || true)  # the -d dump is callgrind.out.1
  [ -n "$dump" ] && grep -q '^totals:' "$dump" && break  # the last line of a complete dump
  sleep 0.1
done
stop_gateway
[ -n "${KEEP_DUMP:-}" ] && cp "$dump" "$KEEP_DUMP"  # for callgrind_annotate
[ "$status" -eq 0 ] || echo "*** the client saw failures (above): the figure below includes them ***" >&2
problems=$(grep -ciE 'warning|error|critical' "$work/$CASE.log" || true)
[ "$problems" -gt 0 ] && { echo "the gateway logged $problems warnings or errors; the first:" >&2; grep -iE 'warning|error|critical' "$work/$CASE.log" | head -3 | cut -c1-300 >&2; }
ir=$(awk '/^summary:/ { print $2; exit }' "$dump")  # what callgrind_annotate calls PROGRAM TOTALS
python3 -c "import sys; ir, n = int(sys.argv[1]), int(sys.argv[2]); print(f'$CASE ($MEASURE): {ir:,} Ir for {n} requests = {ir / n:,.0f} Ir/request')" "$ir" "$COUNT"
