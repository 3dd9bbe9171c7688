#!/usr/bin/env bash
# System calls per request of one front-end case, counted with `strace -c -f` over a fixed number of
# requests: like benchmarks/callgrind.sh's instruction count, a figure that barely moves on a noisy
# machine, for the kernel side that callgrind does not see.
#
#   benchmarks/syscalls.sh [BINARY] [CASE] [COUNT]     # the cases of benchmarks/callgrind.sh; COUNT
#                                                      # default 2000
#
# The provider side runs natively as in benchmarks/frontends-wrk.sh. The gateway starts normally; after
# WARMUP requests (default 200) `strace -c -f` attaches to all its threads, exactly COUNT requests are
# sent (benchmarks/frontends.py send: 4 threads, keep-alive), and strace detaches (for gorush, once
# every measured token was delivered). The table is strace's own, with a column of calls per request.
# strace slows every system call, so this counts calls; its times are not the gateway's.
#
# Needs strace, nginx, curl and python3 with `cryptography`.
set -euo pipefail
cd "$(dirname "$0")/.."
source benchmarks/frontends-lib.sh
fixed_count_arguments "$@"
begin_run syscalls

start_sandbox
start_nginx
port=$(free_port)
write_config "$CASE" "$port"
GATEWAY_BIN="$BIN"
start_gateway "$CASE" "$port" 300
material=$(prepare_material "$CASE" "$port")

echo "warm-up: $WARMUP requests" >&2
timeout 600 python3 benchmarks/frontends.py send "$port" "$CASE" "$material" "$WARMUP" warm >&2
case $CASE in gorush-*) settle "$CASE" "$port" $((WARMUP * $(per_request "$CASE"))) 300 > /dev/null ;; esac

strace -c -f -p "$gateway" -o "$work/strace.txt" 2> "$work/strace.log" &
tracer=$!
pids+=("$tracer")
# strace says "Process N attached" for each thread once it is in place.
for _ in $(seq 100); do grep -q attached "$work/strace.log" 2>/dev/null && break; sleep 0.1; done
sleep 0.5
echo "measured: $COUNT requests" >&2
status=0
timeout 1800 python3 benchmarks/frontends.py send "$port" "$CASE" "$material" "$COUNT" run >&2 || status=$?
case $CASE in gorush-*) settle "$CASE" "$port" $(((WARMUP + COUNT) * $(per_request "$CASE"))) 600 > /dev/null ;; esac
kill -INT "$tracer"
wait "$tracer" 2>/dev/null || true
stop_gateway
[ "$status" -eq 0 ] || echo "*** the client saw failures (above): the figures below include them ***" >&2
python3 - "$work/strace.txt" "$COUNT" "$CASE" <<'PY'
import sys
path, count, case = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rows = []
for line in open(path):
    parts = line.split()
    if len(parts) >= 5 and parts[0][0].isdigit() and parts[-1] != "total":
        calls = int(parts[3])
        rows.append((parts[-1], calls))
total = sum(calls for _, calls in rows)
print(f"{case}: {total:,} system calls for {count} requests = {total / count:.2f} a request")
for name, calls in sorted(rows, key=lambda row: -row[1]):
    print(f"  {name:<16} {calls:>9,}  {calls / count:7.2f} a request")
PY
