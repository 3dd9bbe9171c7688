#!/usr/bin/env bash
# Time to recover from a provider connection that dies without a FIN or a RST, out of process: in a
# network namespace of its own (unshare -n, as root), Tests/PushgateServerTests/NetworkFailures/
# dead_connection.py starts `pushgate sandbox` and `pushgate serve`, opens the provider connection with
# one gorush notification, drops every packet of that connection with nftables, sends ten more (one
# every 200 ms) and reports when the last of them arrived at the emulator, counted from the drop.
#
#   benchmarks/dead-connection.sh [BINARY] [RUNS]        # APNs (ping_timeout 5 s, the default) and FCM
#   PING_TIMEOUT=2 benchmarks/dead-connection.sh …        # the APNs app's ping_timeout
set -euo pipefail
cd "$(dirname "$0")/.."
binary=${1:-.build-release/release/pushgate}
runs=${2:-3}
export PING_TIMEOUT=${PING_TIMEOUT:-5}
for provider in apns fcm; do
  for run in $(seq "$runs"); do
    work=$(mktemp -d /tmp/pushgate-dead.XXXXXX)
    result=$(unshare -n -- python3 Tests/PushgateServerTests/NetworkFailures/dead_connection.py "$binary" "$work/run" "$provider" | tail -1)
    rm -rf "$work"
    python3 - "$provider" "$run" "$result" <<'PY'
import json, sys
provider, run, report = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
counts = report["arrivals"].values()
print(f"{provider} run {run}: recovered {report['recovered_after_seconds']:.2f} s after the drop; "
      f"{sum(1 for c in counts if c == 1)} of {len(counts)} notifications arrived exactly once; "
      f"PINGs missed {report.get('apns_pings_missed')}, connections opened {report.get('connections_opened')}")
PY
  done
done
