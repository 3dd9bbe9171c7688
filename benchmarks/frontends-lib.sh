# Shared by the benchmarks/ scripts that start a gateway (sourced, not run): the run's scratch folder, the
# provider side (`pushgate sandbox`, and nginx as a Web Push sink), a throw-away PostgreSQL cluster, the
# gateway's configuration, its start, and the counters the checks read. Expects $BIN; every wait is bounded.

# Makes the run's scratch folder ($work, in $WORK_DIR, default /tmp) and the list of processes it starts
# ($pids); at exit the processes are stopped and the folder removed (kept with KEEP=1, and its path printed).
begin_run() { # NAME
  work=$(mktemp -d "${WORK_DIR:-/tmp}/pushgate-$1.XXXXXX")
  pids=()
  trap 'for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; wait 2>/dev/null || true; remove_work' EXIT
}
remove_work() {
  if [ -n "${KEEP:-}" ]; then echo "kept $work" >&2; else rm -rf "$work"; fi
}

# The arguments of the fixed-count measurements (callgrind.sh, syscalls.sh): BINARY CASE COUNT, and
# $WARMUP requests before them.
fixed_count_arguments() { # [BINARY] [CASE] [COUNT]
  BIN=$(realpath "${1:-.build-release/release/pushgate}")
  CASE=${2:-matrix-webpush}
  COUNT=${3:-2000}
  WARMUP=${WARMUP:-200}
}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# The gateway's http section on loopback port PORT, with IO_THREADS as http.io_threads and COMPUTE_THREADS
# as http.compute_threads when they are set.
http_section() { # PORT
  echo "http: {bind_addresses: ['127.0.0.1'], port: $1${IO_THREADS:+, io_threads: $IO_THREADS}${COMPUTE_THREADS:+, compute_threads: $COMPUTE_THREADS}}"
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# The APNs, FCM, Web Push and HMS emulators in their own process; writes $work/sandbox/pushgate-sandbox.yaml.
# With arguments, they are a command that runs it (as for start_gateway), and it may take ATTEMPTS × 0.1 s.
start_sandbox() { # [ATTEMPTS WRAPPER…]
  local attempts=${1:-300}
  [ $# -gt 0 ] && shift
  "$@" "${SANDBOX_BIN:-$BIN}" sandbox --directory "$work/sandbox" > "$work/sandbox.log" 2>&1 &
  sandbox=$!
  pids+=($sandbox)
  for _ in $(seq "$attempts"); do grep -q 'Deliveries:' "$work/sandbox.log" && return 0; sleep 0.1; done
  echo "the sandbox did not start:" >&2; tail -5 "$work/sandbox.log" >&2; return 1
}

pg_bin() {
  local dir
  for dir in /usr/lib/postgresql/*/bin; do [ -x "$dir/pg_ctl" ] && { echo "$dir"; return 0; }; done
  return 1
}

# A PostgreSQL cluster in $work/pg on a free loopback port (as the postgres user when run as root, since
# initdb refuses root); stopped at exit. Sets $pg_url. PG_OPTIONS adds server options ("-c name=value …").
start_postgres() {
  PG_BIN=$(pg_bin) || { echo "PostgreSQL not found (Debian: apt-get install postgresql)" >&2; return 1; }
  mkdir -p "$work/pg"
  if [ "$(id -u)" = 0 ]; then
    id postgres >/dev/null 2>&1 || useradd --system --no-create-home postgres
    chown postgres "$work/pg"
    chmod 711 "$work"
    pg_run() { runuser -u postgres -- "$@"; }
  else
    pg_run() { "$@"; }
  fi
  pg_port=$(free_port)
  pg_run "$PG_BIN/initdb" -D "$work/pg/data" -U pushgate --auth=trust -E UTF8 >/dev/null
  pg_run "$PG_BIN/pg_ctl" -D "$work/pg/data" -l "$work/pg/server.log" -w -t 60 \
    -o "-p $pg_port -k $work/pg -c listen_addresses=127.0.0.1 -c max_connections=200 ${PG_OPTIONS:-}" start >/dev/null
  # At exit: the cluster, then what begin_run's trap does.
  trap 'pg_run "$PG_BIN/pg_ctl" -D "$work/pg/data" -m immediate stop >/dev/null 2>&1 || true
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; wait 2>/dev/null || true; remove_work' EXIT
  "$PG_BIN/psql" -h 127.0.0.1 -p "$pg_port" -U pushgate -d postgres -qc 'CREATE DATABASE pushgate_bench' >/dev/null
  pg_url="postgres://pushgate@127.0.0.1:$pg_port/pushgate_bench?sslmode=disable"
}

# A Web Push service that only counts: nginx on a free loopback port reads each POST's body (discarding it)
# and answers 201; its access log has one line per request (method, status, announced body length).
start_nginx() {
  nginx_port=$(free_port)
  mkdir -p "$work/nginx/tmp"
  cat > "$work/nginx/nginx.conf" <<NGINX
worker_processes 1;
master_process off;
daemon off;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log warn;
events { worker_connections 4096; }
http {
  client_body_temp_path $work/nginx/tmp;
  proxy_temp_path $work/nginx/tmp;
  fastcgi_temp_path $work/nginx/tmp;
  uwsgi_temp_path $work/nginx/tmp;
  scgi_temp_path $work/nginx/tmp;
  log_format push '\$request_method \$status \$content_length';
  keepalive_requests 10000000;
  keepalive_timeout 300s;
  client_max_body_size 1m;
  server {
    listen 127.0.0.1:$nginx_port;
    access_log $work/nginx/access.log push buffer=64k flush=1s;
    location / { return 201; }
  }
}
NGINX
  nginx -e "$work/nginx/error.log" -p "$work/nginx" -c "$work/nginx/nginx.conf" > "$work/nginx/stdout.log" 2>&1 &
  nginx=$!
  pids+=($nginx)
  for _ in $(seq 100); do
    curl -s -o /dev/null -w '%{http_code}' -X POST -d probe "http://127.0.0.1:$nginx_port/push/probe" 2>/dev/null | grep -q 201 && return 0
    sleep 0.1
  done
  echo "nginx did not start:" >&2; cat "$work/nginx/error.log" >&2; return 1
}

nginx_posts() { # POSTs nginx has logged (its buffer is flushed every second)
  grep -c '^POST ' "$work/nginx/access.log" 2>/dev/null || true
}

# The gateway's configuration: the sandbox's demo apps (demo.webpush and demo.unifiedpush may also post to
# nginx), the HTTP listener, a SQLite store in the temp dir, warnings only, and the Nextcloud front end.
write_config() { # NAME PORT
  {
    sed -E "s/allowed_endpoints: \['127.0.0.1:([0-9]+)'\]/allowed_endpoints: ['127.0.0.1:\1', '127.0.0.1:${nginx_port:-1}']/" \
      "$work/sandbox/pushgate-sandbox.yaml"
    cat <<YAML
$(http_section "$2")
log: {level: ${BENCH_LOG_LEVEL:-info}${BENCH_LOG_FORMAT:+, format: $BENCH_LOG_FORMAT}}
database: {url: 'sqlite:$work/$1.sqlite'}
nextcloud: {fcm_app: demo.fcm, apns_app: demo.apns}
YAML
    case $1 in gorush-*) echo "gorush: {ios_app: demo.apns, android_app: demo.fcm, allow_unauthenticated: true}" ;; esac
  } > "$work/$1.yaml"
}

# What to put before the gateway's command: with SLOW_FSYNC_US set, `env` with benchmarks/slow-fsync.c
# (built into $work) preloaded, so each of the gateway's disk syncs takes that many microseconds more, as
# on a disk slower to flush than this VM's; nothing otherwise. Sets the array $gateway_prefix.
gateway_prefix() {
  gateway_prefix=()
  [ -n "${SLOW_FSYNC_US:-}" ] || return 0
  cc -O2 -shared -fPIC -o "$work/slow-fsync.so" "$here/slow-fsync.c" -ldl
  gateway_prefix=(env "LD_PRELOAD=$work/slow-fsync.so" "SLOW_FSYNC_US=$SLOW_FSYNC_US")
}

# Starts `pushgate serve` (optionally under a wrapper such as valgrind; $GATEWAY_BIN instead of $BIN if
# set; SLOW_FSYNC_US as in gateway_prefix) and waits for GET /health.
start_gateway() { # NAME PORT ATTEMPTS(×0.1 s) [WRAPPER…]
  local name=$1 port=$2 attempts=$3
  shift 3
  gateway_prefix
  "$@" "${gateway_prefix[@]}" "${GATEWAY_BIN:-$BIN}" serve --config "$work/$name.yaml" > "$work/$name.log" 2>&1 &
  gateway=$!
  pids+=($gateway)
  for _ in $(seq "$attempts"); do
    curl -sf "http://127.0.0.1:$port/health" > /dev/null 2>&1 && return 0
    kill -0 "$gateway" 2>/dev/null || break
    sleep 0.1
  done
  echo "the gateway did not start:" >&2; tail -5 "$work/$name.log" >&2; return 1
}

stop_gateway() {
  kill "$gateway" 2>/dev/null || true
  for _ in $(seq 600); do kill -0 "$gateway" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$gateway" 2>/dev/null || true
  wait "$gateway" 2>/dev/null || true
}

metric_sum() { # PORT NAME FILTER…: the sum of a counter over the label sets matching every filter
  local port=$1 name=$2
  shift 2
  curl -s "http://127.0.0.1:$port/metrics" | awk -v name="$name" -v filters="$*" '
    BEGIN { n = split(filters, f, " ") }
    index($1, name "{") == 1 { ok = 1; for (i = 1; i <= n; i++) if (index($1, f[i]) == 0) ok = 0; if (ok) sum += $2 }
    END { printf "%d", sum }'
}

# The request material of a case: the notify template (Matrix), the batch bodies (Nextcloud, which
# registers the devices at the gateway on PORT first) or the one body (gorush).
# The devices a Matrix case cycles through (DEVICES overrides): distinct pushkeys, as a homeserver's many
# pushers, so no per-device cache answers every request.
default_devices=10000

prepare_material() { # CASE PORT → prints the material file's path
  local file="$work/$1.material"
  case $1 in
    matrix-webpush) python3 "$here/frontends.py" matrix-template webpush "http://127.0.0.1:$nginx_port/push/bench" "$file" "${DEVICES:-$default_devices}" ;;
    matrix-apns) python3 "$here/frontends.py" matrix-template apns - "$file" "${DEVICES:-$default_devices}" ;;
    matrix-unifiedpush) python3 "$here/frontends.py" matrix-template unifiedpush "http://127.0.0.1:$nginx_port/up/bench?up=1" "$file" "${DEVICES:-$default_devices}" ;;
    nextcloud-fcm) python3 "$here/frontends.py" nextcloud-bodies "$2" fcm "$file" >&2 ;;
    nextcloud-apns) python3 "$here/frontends.py" nextcloud-bodies "$2" apns "$file" >&2 ;;
    gorush-ios) # one iOS token, gorush's default (async: queued in the outbox, answered at once)
      printf '{"notifications":[{"platform":1,"tokens":["%s"],"message":"Hello","topic":"im.pushgate.sandbox","data":{"chatId":"0x01"}}]}\n' \
        "$(printf 'a1%.0s' $(seq 32))" > "$file" ;;
    gorush-android100) # one Android notification with 100 tokens (async: one outbox entry)
      local tokens; tokens=$(for i in $(seq -w 0 99); do printf '"bench-token-%s",' "$i"; done)
      printf '{"notifications":[{"platform":2,"tokens":[%s],"title":"Hi","message":"Hello","data":{"chatId":"0x01"}}]}\n' "${tokens%,}" > "$file" ;;
    *) echo "unknown case $1" >&2; return 1 ;;
  esac
  echo "$file"
}

# What proves a case's deliveries: nginx's POSTs for Web Push, else the gateway's delivered counter.
delivered_count() { # CASE PORT
  case $1 in
    matrix-webpush | matrix-unifiedpush) nginx_posts ;;
    matrix-apns | nextcloud-apns | gorush-ios) metric_sum "$2" pushgate_deliveries_total 'app="demo.apns"' 'outcome="delivered"' ;;
    nextcloud-fcm | gorush-android100) metric_sum "$2" pushgate_deliveries_total 'app="demo.fcm"' 'outcome="delivered"' ;;
  esac
}

per_request() { # CASE: notifications per request
  case $1 in nextcloud-* | gorush-android100) echo 100 ;; *) echo 1 ;; esac
}

# Waits (at most SECONDS) until `delivered_count` reaches TARGET and then holds still for 1.5 s, or holds
# still for 10 s; prints the last count.
settle() { # CASE PORT TARGET SECONDS
  local last=-1 value still=0
  for _ in $(seq $(($4 * 2))); do
    value=$(delivered_count "$1" "$2")
    if [ "$value" = "$last" ]; then still=$((still + 1)); else still=0; fi
    last=$value
    if [ "$value" -ge "$3" ] && [ "$still" -ge 3 ]; then break; fi
    [ "$still" -ge 20 ] && break
    sleep 0.5
  done
  echo "$last"
}

cpu_ticks() { # utime + stime of PID, in clock ticks
  awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"
}
provider_ticks() { # utime + stime of the provider side: the sandbox, and nginx when it runs (single process)
  local total=0 pid
  for pid in ${sandbox:-} ${nginx:-}; do [ -r "/proc/$pid/stat" ] && total=$((total + $(cpu_ticks "$pid"))); done
  echo "$total"
}
kernel_ticks() { # stime of PID (time in the kernel on its behalf), in clock ticks
  awk '{ sub(/^.*\) /, ""); print $13 }' "/proc/$1/stat"
}

# The disk's sync latency during a measurement (benchmarks/disk-probe.py in the run's folder, which is on
# the store's disk): start_disk_probe before it, stop_disk_probe after it, which sets $disk_syncs to
# "p50/p99/max ms, N over 20 ms" (not in a subshell: it waits for the probe). A latency figure of an answer that waits for the store's fsync is the disk's as much as the
# gateway's: this says which.
start_disk_probe() {
  python3 "$here/disk-probe.py" "$work/disk-probe" > "$work/disk-probe.txt" &
  disk_probe=$!
  pids+=($disk_probe)
}
stop_disk_probe() {
  kill -TERM "$disk_probe" 2>/dev/null || true
  wait "$disk_probe" 2>/dev/null || true
  disk_syncs=$(cat "$work/disk-probe.txt" 2>/dev/null || true)
  disk_syncs=${disk_syncs:--}
}

# The machine's stolen and total CPU ticks so far, all cores (/proc/stat's `cpu` line): on a virtual
# machine, steal is the time the hypervisor gave the cores to other guests while this one wanted them. A
# run's share of it says how far its figures are the neighbours' as much as the gateway's.
steal_ticks() {
  awk '/^cpu / { total = 0; for (i = 2; i <= NF; i++) total += $i; print $9, total }' /proc/stat
}

# The share of the machine's CPU time stolen between two steal_ticks readings, as "12.3 %".
steal_share() { # steal_share "STEAL TOTAL" "STEAL TOTAL"
  python3 -c 'import sys; s0, t0, s1, t1 = map(int, sys.argv[1:]); print(f"{100 * (s1 - s0) / max(1, t1 - t0):.1f} %")' $1 $2
}

# The machine's speed just now, as a reference beside a run's CPU figures: P-256 ECDH operations a second
# on one core (`openssl speed`, one second), the operation that costs a Web Push message most. On a shared
# virtual machine it drops in the spells when neighbours are busy; a CPU figure taken in such a spell is
# high by about as much. Prints "-" without the openssl command.
machine_reference() {
  command -v openssl > /dev/null || { echo "-"; return; }
  openssl speed -seconds 1 ecdhp256 2>/dev/null | awk '/ecdh \(nistp256\)/ { printf "%.0f\n", $NF }'
}

