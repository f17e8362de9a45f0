#!/usr/bin/env bash
# The test environment: the one place that knows what `make test` needs and
# how to get it. `make test` and CI (.ci/run) both go through it.
#
#   tests/env.sh setup [--ci]    install or check everything the suite needs
#                                (idempotent; cached under $PELOTON_CACHE,
#                                default ~/.cache/peloton). --ci adds what CI
#                                checks beyond the suite (protoc).
#   tests/env.sh run CMD...      setup, start a Cassandra node on free loopback
#                                ports, run CMD with the test environment
#                                (below), stop the node
#   tests/env.sh vars            print the test environment as shell exports
#
# The test environment: PATH with the Python virtualenv first (the clients'
# packages, pytest), PYTHON, PELOTON_SCHEMATHESIS, PELOTON_TEST_CASSANDRA
# (run only) and PELOTON_TEST_STRICT=1, under which a test whose real
# dependency is missing fails instead of skipping (internal/testenv).
#
# System packages (Debian): when one is missing, setup installs it if it
# runs as root, and otherwise stops at once with the one apt-get command
# that installs them all.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="${PELOTON_CACHE:-$HOME/.cache/peloton}"
# The Python client's virtualenv. Tests run Python programs as tasks (the
# driver example), and tasks of the local host manager run as other users
# when the server is root: as root it lives in a directory every user may
# read, made from the system's python3 (not one under /root).
if [ "$(id -u)" = 0 ]; then
  shared_cache="${PELOTON_SHARED_CACHE:-/var/cache/peloton-test}"
else
  shared_cache="$cache"
fi
pick_python() {
  if [ "$(id -u)" = 0 ] && [ -x /usr/bin/python3 ]; then echo /usr/bin/python3; else command -v python3 || true; fi
}
venv="$shared_cache/python-$(sha256sum "$repo/clients/python/requirements.txt" | cut -c1-12)"
schemathesis_venv="$cache/schemathesis"
SCHEMATHESIS_VERSION="${SCHEMATHESIS_VERSION:-}"

log() { printf 'env.sh: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }
stamp_ok() { [ -f "$1" ] && [ "$(cat "$1")" = "$2" ]; }

# ---- system packages ------------------------------------------------------

# missing_packages [--ci] prints the Debian packages whose commands the
# suite needs and this machine lacks.
missing_packages() {
  local ci=${1:-}
  local -a need=()
  local pair
  for pair in git:git java:openjdk-17-jdk-headless javac:openjdk-17-jdk-headless \
      mvn:maven python3:python3 node:nodejs npm:npm ip:iproute2 openssl:openssl \
      systemd-analyze:systemd flock:util-linux sha256sum:coreutils; do
    command -v "${pair%%:*}" >/dev/null 2>&1 || need+=("${pair#*:}")
  done
  command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 \
    || [ -n "${CHROMIUM:-}" ] || need+=(chromium)
  local py; py="$(pick_python)"
  if [ -n "$py" ] && ! "$py" -c 'import venv, ensurepip' 2>/dev/null; then
    need+=(python3-venv)
  fi
  if [ "$ci" = --ci ]; then
    command -v protoc >/dev/null 2>&1 || need+=(protobuf-compiler)
    # protoc's well-known types (google/protobuf/*.proto) come with the
    # development package, which protobuf-compiler only recommends.
    [ -f /usr/include/google/protobuf/timestamp.proto ] || need+=(libprotobuf-dev)
  fi
  if [ ${#need[@]} -gt 0 ]; then printf '%s\n' "${need[@]}" | sort -u | tr '\n' ' '; fi
}

system_packages() {
  local missing
  missing="$(missing_packages "${1:-}")"
  [ -z "$missing" ] && return 0
  if [ "$(id -u)" != 0 ]; then
    die "missing Debian packages; install them with:
    sudo apt-get update && sudo apt-get install -y $missing"
  fi
  log "installing Debian packages: $missing"
  apt-get update -qq
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null

}

# ---- cached tools -----------------------------------------------------------

python_client() {
  local want; want="$(cat "$repo/clients/python/requirements.txt")"
  if stamp_ok "$venv/.peloton-stamp" "$want"; then return 0; fi
  log "Python client packages into $venv (pip)"
  rm -rf "$venv"
  mkdir -p "$shared_cache"
  chmod 0755 "$shared_cache"
  "$(pick_python)" -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check -r "$repo/clients/python/requirements.txt"
  chmod -R a+rX "$venv"
  printf '%s' "$want" > "$venv/.peloton-stamp"
}

schemathesis() {
  local want="schemathesis${SCHEMATHESIS_VERSION:+==$SCHEMATHESIS_VERSION}"
  if [ -x "$schemathesis_venv/bin/st" ] && stamp_ok "$schemathesis_venv/.peloton-stamp" "$want"; then return 0; fi
  log "schemathesis into $schemathesis_venv (pip)"
  rm -rf "$schemathesis_venv"
  python3 -m venv "$schemathesis_venv"
  "$schemathesis_venv/bin/pip" install -q --disable-pip-version-check "$want"
  printf '%s' "$want" > "$schemathesis_venv/.peloton-stamp"
}

ui_driver() {
  local want; want="$(sha256sum "$repo/ui/package-lock.json" | cut -c1-64)"
  if [ -d "$repo/ui/node_modules/playwright-core" ] && stamp_ok "$repo/ui/node_modules/.peloton-stamp" "$want"; then
    return 0
  fi
  log "the web UI's packages: npm ci in ui/"
  (cd "$repo/ui" && npm ci --no-audit --no-fund --loglevel=error)
  printf '%s' "$want" > "$repo/ui/node_modules/.peloton-stamp"
}

java_client() {
  local want; want="$(sha256sum "$repo/clients/java/pom.xml" | cut -c1-64)"
  local stamp="$cache/java-client.stamp"
  if stamp_ok "$stamp" "$want"; then return 0; fi
  log "the Java client's dependencies into ~/.m2 (mvn dependency:go-offline)"
  (cd "$repo/clients/java" && mvn -B -q -ntp dependency:go-offline)
  mkdir -p "$cache"
  printf '%s' "$want" > "$stamp"
}

cmd_setup() {
  local started=$SECONDS
  system_packages "${1:-}"
  mkdir -p "$cache"
  (cd "$repo" && go mod download)
  bash "$repo/deploy/k8s/cluster.sh" build
  bash "$repo/deploy/cassandra/cassandra.sh" fetch
  python_client
  schemathesis
  ui_driver
  java_client
  log "test environment ready in $(( SECONDS - started ))s (cache: $cache)"
}

cmd_vars() {
  printf 'export PATH=%q\n' "$venv/bin:$PATH"
  printf 'export PYTHON=%q\n' "$venv/bin/python3"
  printf 'export PELOTON_SCHEMATHESIS=%q\n' "$schemathesis_venv/bin/st"
  printf 'export PELOTON_TEST_STRICT=1\n'
}

# ---- a Cassandra node for the run ---------------------------------------------

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

cmd_run() {
  [ $# -gt 0 ] || die "usage: tests/env.sh run CMD..."
  cmd_setup
  eval "$(cmd_vars)"
  local dir port storage_port started=$SECONDS
  dir="$(mktemp -d "${TMPDIR:-/tmp}/peloton-test-cassandra.XXXXXX")"
  port="$(free_port)"
  storage_port="$(free_port)"
  while [ "$storage_port" = "$port" ]; do storage_port="$(free_port)"; done
  # shellcheck disable=SC2064
  trap "bash '$repo/deploy/cassandra/cassandra.sh' stop --kill --dir '$dir' >/dev/null 2>&1 || true; rm -rf '$dir'" EXIT
  log "Cassandra on 127.0.0.1:$port"
  bash "$repo/deploy/cassandra/cassandra.sh" start --clean --dir "$dir" --port "$port" --storage-port "$storage_port"
  log "Cassandra ready after $(( SECONDS - started ))s"
  export PELOTON_TEST_CASSANDRA="127.0.0.1:$port"
  "$@"
}

case "${1:-}" in
  setup) shift; cmd_setup "$@" ;;
  run) shift; [ "${1:-}" = -- ] && shift; cmd_run "$@" ;;
  vars) cmd_vars ;;
  *) sed -n '2,21s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; exit 2 ;;
esac
