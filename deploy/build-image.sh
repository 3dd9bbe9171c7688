#!/usr/bin/env bash
# Builds Pushgate's container image from deploy/Containerfile where no container registry is reachable,
# then runs it and checks it: the image's HEALTHCHECK, GET /health, that the gateway runs on jemalloc,
# and one delivery to the built-in sandbox's APNs emulator sent from inside the container. Everything it
# made is removed at the end, but for the image (IMAGE, default localhost/pushgate:check) when KEEP_IMAGE=1
# or when an image of that name was there before the run, and the two base images when KEEP_BASE_IMAGES=1 (a later run with it set uses them again instead of
# running debootstrap).
#
# The two base images the Containerfile names come from Debian's packages instead of a registry:
#   - the runtime base: debootstrap's minbase with libjemalloc2, libsecp256k1-1 and ca-certificates;
#   - the builder base: minbase with what the Swift toolchain needs to compile and link (and jemalloc's
#     libjemalloc-dev); the toolchain
#     itself is this machine's (the directory of the `swift` on PATH, or SWIFT_TOOLCHAIN), mounted
#     read-only into the build, and SwiftPM's cache of package repositories is lent to it as a copy.
# The build step reaches the packages' git repositories through the host's network.
#
# Needs root (debootstrap), podman, buildah and python3 (installed from Debian's packages when missing), and
# DEBIAN_MIRROR (default http://deb.debian.org/debian). Slow: a release build from scratch.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

suite=${DEBIAN_SUITE:-bookworm}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
image=${IMAGE:-localhost/pushgate:check}
runtime_base=localhost/pushgate-runtime-base:$suite
builder_base=localhost/pushgate-builder-base:$suite
container=pushgate-check-$$

log() { printf '[build-image] %s\n' "$*" >&2; }
fail() { log "FAILED: $*"; exit 1; }

[ "$(id -u)" = 0 ] || fail "run as root (debootstrap needs it)"

work=$(mktemp -d /var/tmp/pushgate-image.XXXXXX)
# An image of that name made before this run is the operator's: replaced by the build, but not removed.
image_existed=0
if command -v podman >/dev/null 2>&1 && podman image exists "$image" 2>/dev/null; then image_existed=1; fi
clean_up() {
  local status=$?
  log "cleaning up"
  podman rm --force --volumes --time 5 "$container" >/dev/null 2>&1 || true
  # Without --force, and no prune: an image that a container of the operator's own uses stays, and so
  # does every image this run did not make (buildah's stages are removed by the build itself).
  # The image before the bases it is built on (a base with a child image is only untagged).
  if [ "${KEEP_IMAGE:-0}" != 1 ] && [ "$image_existed" = 0 ]; then podman rmi "$image" >/dev/null 2>&1 || true; fi
  if [ "${KEEP_BASE_IMAGES:-0}" != 1 ]; then podman rmi "$runtime_base" "$builder_base" >/dev/null 2>&1 || true; fi
  rm -rf "$work"
  exit "$status"
}
trap clean_up EXIT

# --- Tools ------------------------------------------------------------------------------------------------
# Installs Debian's PACKAGES; the package lists are read once a run, before the first install.
apt_lists_read=0
install_debian() { # install_debian PACKAGE...
  if [ "$apt_lists_read" = 0 ]; then apt-get update -qq; apt_lists_read=1; fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}
if ! command -v podman >/dev/null 2>&1 || ! command -v buildah >/dev/null 2>&1 || ! command -v debootstrap >/dev/null 2>&1; then
  log "installing Debian's podman, buildah and debootstrap"
  install_debian podman buildah debootstrap
fi
# The checks at the end run python3 on the host: a free port, the start-up log, GET /health.
if ! command -v python3 >/dev/null 2>&1; then
  log "installing Debian's python3"
  install_debian python3
fi
toolchain=${SWIFT_TOOLCHAIN:-$(dirname "$(dirname "$(dirname "$(readlink -f "$(command -v swift)")")")")}
[ -x "$toolchain/usr/bin/swift" ] || fail "no Swift toolchain at $toolchain (set SWIFT_TOOLCHAIN to the directory holding usr/bin/swift)"
log "toolchain: $toolchain ($("$toolchain/usr/bin/swift" --version 2>&1 | head -n 1))"

# --- Base images from Debian's packages ----------------------------------------------------------------
# Imports a debootstrapped tree as an image, without the package lists and caches debootstrap leaves.
import_tree() {
  local tree=$1 name=$2
  rm -rf "$tree"/var/lib/apt/lists/* "$tree"/var/cache/apt/archives/*.deb
  tar --numeric-owner -C "$tree" -c . | podman import --quiet - "$name" >/dev/null
  log "$name: $(podman image inspect --format '{{.Size}}' "$name" | numfmt --to=iec) imported"
}

start=$(date +%s)
if [ "${KEEP_BASE_IMAGES:-0}" = 1 ] && podman image exists "$runtime_base" && podman image exists "$builder_base"; then
  log "using the base images of an earlier run: $runtime_base, $builder_base"
else
  log "debootstrap $suite (runtime base: minbase, libjemalloc2, libsecp256k1-1, ca-certificates)"
  debootstrap --variant=minbase --include=libjemalloc2,libsecp256k1-1,ca-certificates "$suite" "$work/runtime" "$mirror" >"$work/debootstrap-runtime.log" 2>&1 \
    || { tail -n 20 "$work/debootstrap-runtime.log" >&2; fail "debootstrap of the runtime base"; }
  import_tree "$work/runtime" "$runtime_base"

  # What the toolchain's compilers and linker need (the official Swift images install the same), git for
  # SwiftPM, binutils for strip, libjemalloc-dev for the Jemalloc trait.
  builder_packages=binutils,ca-certificates,git,libc6-dev,libcurl4,libedit2,libgcc-12-dev,libjemalloc-dev,libncurses6,libsqlite3-0,libstdc++-12-dev,libuuid1,libxml2,libz3-4,pkg-config,tzdata,zlib1g-dev
  log "debootstrap $suite (builder base: minbase and $builder_packages)"
  debootstrap --variant=minbase --include="$builder_packages" "$suite" "$work/builder" "$mirror" >"$work/debootstrap-builder.log" 2>&1 \
    || { tail -n 20 "$work/debootstrap-builder.log" >&2; fail "debootstrap of the builder base"; }
  # The toolchain is mounted at /opt/swift during the build; `swift` on PATH finds the rest beside it.
  for tool in swift swiftc; do ln -s "/opt/swift/usr/bin/$tool" "$work/builder/usr/local/bin/$tool"; done
  import_tree "$work/builder" "$builder_base"
  log "base images took $(( $(date +%s) - start )) s"
fi

# --- The container runtime ------------------------------------------------------------------------------
# podman's default runtime (crun) and its default limits (RLIMIT_NOFILE and RLIMIT_NPROC raised to the
# maximum) fail inside some sandboxes, gVisor's among them: "setrlimit RLIMIT_NPROC: Operation not
# permitted", then "cgroups in hybrid mode not supported". runc with limits this machine grants works
# there; it is taken only when the default fails.
podman_runtime=()
buildah_runtime=()
limits=()
if ! probe=$(podman run --rm --network host "$runtime_base" true 2>&1); then
  log "podman's default runtime cannot start a container here: $probe"
  command -v runc >/dev/null 2>&1 || { install_debian runc >/dev/null 2>&1 || true; }
  runc=$(command -v runc) || fail "runc is missing (Debian's runc package)"
  podman_runtime=(--runtime "$runc")
  buildah_runtime=(--runtime "$runc")
  limits=(--ulimit "nofile=$(ulimit -Hn):$(ulimit -Hn)" --ulimit nproc=4096:4096)
  probe=$(podman "${podman_runtime[@]}" run --rm --network host "${limits[@]}" "$runtime_base" true 2>&1) \
    || fail "runc cannot start a container either: $probe"
  log "using $runc with ${limits[*]}"
fi

# --- The image ----------------------------------------------------------------------------------------
cp -a "${HOME}/.cache/org.swift.swiftpm" "$work/swiftpm-cache" 2>/dev/null || mkdir -p "$work/swiftpm-cache"
log "building $image (a release build from scratch: many minutes)"
start=$(date +%s)
buildah build --quiet --format docker --network host "${buildah_runtime[@]}" "${limits[@]}" \
  --build-arg BUILDER_IMAGE="$builder_base" --build-arg RUNTIME_IMAGE="$runtime_base" \
  --volume "$toolchain:/opt/swift:ro" --volume "$work/swiftpm-cache:/root/.cache/org.swift.swiftpm" \
  --file deploy/Containerfile --tag "$image" "$root" >"$work/build.log" 2>&1 \
  || { tail -n 40 "$work/build.log" >&2; fail "buildah build"; }
log "image built in $(( $(date +%s) - start )) s: $(podman image inspect --format '{{.Size}}' "$image" | numfmt --to=iec)"
log "image user: $(podman image inspect --format '{{.Config.User}}' "$image"), volumes: $(podman image inspect --format '{{range $k, $v := .Config.Volumes}}{{$k}} {{end}}' "$image")"
log "image health check: $(podman image inspect --format '{{.HealthCheck.Test}}' "$image")"

# --- Run and check ------------------------------------------------------------------------------------
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
# An operator's own configuration, mounted over the image's: loopback of the host network, a free port.
cat >"$work/pushgate.yaml" <<EOF
http: {bind_addresses: ['127.0.0.1'], port: $port}
log: {level: info, format: json}
database: {url: 'sqlite:/var/lib/pushgate/pushgate.sqlite'}
EOF
chmod 0644 "$work/pushgate.yaml"
log "running $image on the host's network, port $port"
podman "${podman_runtime[@]}" run --detach --name "$container" --network host "${limits[@]}" \
  --volume "$work/pushgate.yaml:/etc/pushgate/pushgate.yaml:ro" "$image" >/dev/null \
  || fail "podman run"

healthy=no
for _ in $(seq 1 120); do
  if podman healthcheck run "$container" >/dev/null 2>&1; then healthy=yes; break; fi
  [ "$(podman inspect --format '{{.State.Running}}' "$container")" = true ] || break
  sleep 1
done
[ "$healthy" = yes ] || { podman logs "$container" 2>&1 | tail -n 30 >&2; fail "the image's HEALTHCHECK (pushgate health) never passed"; }
log "HEALTHCHECK (pushgate health inside the container): healthy"
log "health status: $(podman inspect --format '{{.State.Health.Status}}' "$container" 2>/dev/null || echo unknown)"

# The release build's allocator (the Jemalloc trait): the start-up log's threads line names it.
allocator=$(podman logs "$container" 2>&1 | python3 -c '
import json, sys
for line in sys.stdin:
    try: event = json.loads(line)
    except ValueError: continue
    if event.get("msg") == "threads": print(event.get("allocator", "")); break')
case $allocator in jemalloc\ 5.*) ;; *) fail "the gateway does not run on jemalloc (threads: allocator=${allocator:-none})" ;; esac
log "allocator: $allocator"

code=$(python3 -c "import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:$port/health', timeout=10).status)") \
  || fail "GET /health from the host"
[ "$code" = 200 ] || fail "GET /health answered $code"
log "GET http://127.0.0.1:$port/health from the host: $code"

token=$(printf 'a1%.0s' $(seq 1 32))
alert="hello from the container $$"
outcome=$(podman exec "$container" pushgate send --config /var/lib/pushgate/pushgate-sandbox/pushgate-sandbox.yaml \
  --app demo.apns --token "$token" --alert "$alert") || { log "$outcome"; fail "pushgate send inside the container"; }
log "pushgate send (inside the container, to the sandbox's APNs emulator): $outcome"
python3 - "$port" "$alert" <<'EOF' || fail "the sandbox did not record the delivery"
import json, sys, urllib.request
port, alert = sys.argv[1], sys.argv[2]
body = urllib.request.urlopen(f"http://127.0.0.1:{port}/sandbox/deliveries", timeout=10).read().decode()
if alert not in body:
    sys.exit(f"no delivery with {alert!r} in /sandbox/deliveries")
print(f"[build-image] /sandbox/deliveries lists the delivery ({len(json.loads(body))} in all)", file=sys.stderr)
EOF

podman stop --time 30 "$container" >/dev/null
log "stopped: exit status $(podman inspect --format '{{.State.ExitCode}}' "$container"); the gateway's last lines:"
podman logs "$container" 2>&1 | tail -n 3 >&2
log "OK"
