#!/usr/bin/env bash
# Runs a real Apache Cassandra on the loopback interface, one node or a
# cluster of N on 127.0.0.x, for tests and local development. See
# README.md beside this file.
#
#   cassandra.sh fetch                      resolve the server jars into the cache
#   cassandra.sh check                      can a node start here without a fetch?
#   cassandra.sh start [options]            start in the background, wait for CQL
#   cassandra.sh stop  [--dir DIR]          SIGTERM, then SIGKILL after a grace
#   cassandra.sh status [--dir DIR]         running? answering CQL?
#   cassandra.sh cql [--dir DIR] STMT...    run CQL statements (no driver needed)
#   cassandra.sh logs [--dir DIR]           print the node's log file path
#   cassandra.sh nodetool [--dir DIR] -- ARGS  run nodetool against a node started
#                                           with --jmx-port
#   cassandra.sh cluster start|stop|status --dir DIR [--nodes N] [options]
#                                           N nodes in DIR/node1..N on
#                                           127.0.0.2.. (one ring, node1 the seed)
#
# Environment: PELOTON_CACHE (cache root), CASSANDRA_DIR (node directory),
# JAVA (java binary), MVN (maven binary), CASSANDRA_MVN_ARGS (extra mvn args),
# CASSANDRA_JVM_OPTS (extra JVM options appended last).
set -euo pipefail

CASSANDRA_VERSION=5.0.9
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE_ROOT="${PELOTON_CACHE:-$HOME/.cache/peloton}/cassandra"
LIB_DIR="$CACHE_ROOT/$CASSANDRA_VERSION/lib"
MARKER_NAME=".fetch-complete"
JAVA_BIN="${JAVA:-java}"
MVN_BIN="${MVN:-mvn}"
PROBE="$SCRIPT_DIR/cqlprobe.py"
HOST=127.0.0.1
# Cluster membership of a node: the seeds it gossips with first (its own
# address when empty) and its one token (0 when empty).
SEEDS=
TOKEN=
# cluster: how many nodes, and the first node's address.
NODES=3
FIRST_ADDRESS=127.0.0.2
# Flags given on the command line; a restarted node takes the others from
# its node.env.
GIVEN=" "
# The node's JMX port, on 127.0.0.1 only (none when empty: no nodetool).
JMX_PORT=
# start --replace: the node's data is gone; it takes its own place in the
# ring again, streaming its ranges from the other replicas.
# start --replace-address A: a new node takes the place of the dead node A.
REPLACE=0
REPLACE_ADDRESS=

# Defaults for start/stop; overridden by flags.
NODE_DIR="${CASSANDRA_DIR:-$CACHE_ROOT/node}"
NATIVE_PORT=9042
STORAGE_PORT=7000
HEAP=512M
TIMEOUT_SECONDS=180
STOP_GRACE_SECONDS=30
CLEAN=0
DURABLE=0
KILL_NOW=0

log() { printf 'cassandra.sh: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

now_millis() { date +%s%3N; }

elapsed_since() { # start_millis -> "12.3s"
  local ms=$(( $(now_millis) - $1 ))
  printf '%d.%01ds' $((ms / 1000)) $(((ms % 1000) / 100))
}

usage() {
  sed -n '2,17s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"
  cat <<EOF

start options:
  --dir DIR            node directory: yaml, data, pid, log (default $NODE_DIR)
  --port N             CQL native port (default $NATIVE_PORT)
  --storage-port N     internode port, loopback only (default $STORAGE_PORT)
  --heap SIZE          JVM heap, e.g. 512M or 1G (default $HEAP)
  --address A          listen and CQL address, loopback (default $HOST)
  --seeds A[,B]        addresses of the seeds (default: --address)
  --token T            the node's token in the ring (default 0)
  --timeout SECONDS    how long to wait for CQL (default $TIMEOUT_SECONDS)
  --jmx-port N         open JMX on 127.0.0.1:N, for nodetool (default: no JMX)
  --clean              delete the node's data before starting
  --replace            the node of a ring lost its data (DIR/data removed):
                       it takes its own place again (same address and token)
                       and streams its ranges from the other replicas; run
                       nodetool repair on it afterwards. In a ring of few
                       nodes this may fail with "Unable to contact any
                       seeds": prefer --replace-address
  --replace-address A  a new node (its own --dir and --address, with the
                       ring's --seeds and A's --token) takes the place of
                       the dead node A, streaming A's ranges from the other
                       replicas; run nodetool repair on it afterwards
  --durable            sync the commit log before acknowledging a write and
                       log schema changes, so that a node killed with
                       SIGKILL restarts with every acknowledged write
stop options:
  --dir DIR            node directory (default $NODE_DIR)
  --grace SECONDS      how long SIGTERM may take before SIGKILL (default $STOP_GRACE_SECONDS)
  --kill               SIGKILL at once: no flush, fastest; for throwaway data
cluster options (start also takes --port, --storage-port, --heap, --timeout,
--clean, --durable, applied to every node; stop takes --grace, --kill):
  --dir DIR            the cluster's directory, one node directory per node
  --nodes N            how many nodes (default $NODES)
  --first-address A    node1's address; node i has the i-th from it (default $FIRST_ADDRESS)
  --jmx-port N         node i opens JMX on 127.0.0.1:N+i-1 (default: no JMX)
A node of a cluster is stopped and started again alone with stop/start
--dir DIR/nodeI: it keeps its address, ports, seeds and token (node.env).
EOF
}

parse_flags() {
  while [ $# -gt 0 ]; do
    case "$1" in
      --dir) NODE_DIR="${2:?--dir needs a value}"; GIVEN+="dir "; shift 2 ;;
      --port) NATIVE_PORT="${2:?--port needs a value}"; GIVEN+="port "; shift 2 ;;
      --storage-port) STORAGE_PORT="${2:?--storage-port needs a value}"; GIVEN+="storage-port "; shift 2 ;;
      --heap) HEAP="${2:?--heap needs a value}"; GIVEN+="heap "; shift 2 ;;
      --address) HOST="${2:?--address needs a value}"; GIVEN+="address "; shift 2 ;;
      --seeds) SEEDS="${2:?--seeds needs a value}"; GIVEN+="seeds "; shift 2 ;;
      --token) TOKEN="${2:?--token needs a value}"; GIVEN+="token "; shift 2 ;;
      --jmx-port) JMX_PORT="${2:?--jmx-port needs a value}"; GIVEN+="jmx-port "; shift 2 ;;
      --replace) REPLACE=1; shift ;;
      --replace-address) REPLACE=1; REPLACE_ADDRESS="${2:?--replace-address needs a value}"; shift 2 ;;
      --nodes) NODES="${2:?--nodes needs a value}"; shift 2 ;;
      --first-address) FIRST_ADDRESS="${2:?--first-address needs a value}"; shift 2 ;;
      --timeout) TIMEOUT_SECONDS="${2:?--timeout needs a value}"; shift 2 ;;
      --grace) STOP_GRACE_SECONDS="${2:?--grace needs a value}"; shift 2 ;;
      --clean) CLEAN=1; shift ;;
      --durable) DURABLE=1; shift ;;
      --kill) KILL_NOW=1; shift ;;
      --) shift; REST+=("$@"); return ;;
      -h|--help) usage; exit 0 ;;
      -*) die "unknown flag: $1 (see --help)" ;;
      *) REST+=("$1"); shift ;;
    esac
  done
}

check_number() { # name value
  case "$2" in ''|*[!0-9]*) die "$1 must be a number, got '$2'" ;; esac
}

check_loopback() { # address: nodes listen on loopback only
  [[ "$1" =~ ^127\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}$ ]] \
    || die "address '$1' is not a loopback address (127.x.y.z)"
}

# ---------------------------------------------------------------- fetch

lib_complete() {
  local marker="$LIB_DIR/$MARKER_NAME" jar
  [ -f "$marker" ] || return 1
  [ "$(head -n1 "$marker")" = "cassandra $CASSANDRA_VERSION" ] || return 1
  while IFS= read -r jar; do
    [ -f "$LIB_DIR/$jar" ] || return 1
  done < <(tail -n +2 "$marker")
  return 0
}

cmd_fetch() {
  local started staging
  started=$(now_millis)
  if lib_complete; then
    log "jars for Cassandra $CASSANDRA_VERSION already in $LIB_DIR ($(elapsed_since "$started"))"
    return 0
  fi
  command -v "$MVN_BIN" >/dev/null || die "maven ($MVN_BIN) not found; install it (apt-get install maven)"
  mkdir -p "$(dirname "$LIB_DIR")"
  # One fetch at a time per cache; a waiter finds the work done.
  exec 8> "$(dirname "$LIB_DIR")/.fetch.lock"
  flock 8
  if lib_complete; then
    flock -u 8
    log "jars for Cassandra $CASSANDRA_VERSION already in $LIB_DIR ($(elapsed_since "$started"))"
    return 0
  fi
  staging="$(mktemp -d "$(dirname "$LIB_DIR")/lib.partial.XXXXXX")"
  log "resolving org.apache.cassandra:cassandra-all:$CASSANDRA_VERSION and its dependencies from Maven Central"
  # shellcheck disable=SC2086
  if ! "$MVN_BIN" -B -q -f "$SCRIPT_DIR/pom.xml" \
      -Dcassandra.version="$CASSANDRA_VERSION" \
      dependency:copy-dependencies \
      -DincludeScope=runtime -DoutputDirectory="$staging" \
      ${CASSANDRA_MVN_ARGS:-} 2>&1 | sed 's/\x1b\[[0-9;]*m//g; /^[[:space:]]*$/d' >&2; then
    rm -rf "$staging"
    die "maven failed to resolve the Cassandra jars"
  fi
  ls "$staging"/cassandra-all-"$CASSANDRA_VERSION".jar >/dev/null 2>&1 \
    || { rm -rf "$staging"; die "cassandra-all-$CASSANDRA_VERSION.jar missing after resolve"; }
  ls "$staging"/jamm-*.jar >/dev/null 2>&1 \
    || { rm -rf "$staging"; die "jamm jar missing after resolve"; }
  { echo "cassandra $CASSANDRA_VERSION"; (cd "$staging" && ls -1 -- *.jar); } > "$staging/$MARKER_NAME"
  rm -rf "$LIB_DIR"
  mv "$staging" "$LIB_DIR"
  flock -u 8
  log "fetched $(($(wc -l < "$LIB_DIR/$MARKER_NAME") - 1)) jars ($(du -sh "$LIB_DIR" | cut -f1)) into $LIB_DIR in $(elapsed_since "$started")"
}

# check: the jars are in the cache and a JDK and Python are on PATH, so
# that start needs nothing from the network.
cmd_check() {
  lib_complete || die "Cassandra $CASSANDRA_VERSION's jars are not in $LIB_DIR: run cassandra.sh fetch"
  command -v "$JAVA_BIN" >/dev/null || die "java ($JAVA_BIN) not found; install a JDK 17"
  command -v python3 >/dev/null || die "python3 is needed for the CQL readiness check"
  log "ready to start Cassandra $CASSANDRA_VERSION from $LIB_DIR"
}

# ---------------------------------------------------------------- process helpers

pid_file() { echo "$NODE_DIR/cassandra.pid"; }
log_file() { echo "$NODE_DIR/cassandra.log"; }

# Prints the pid of this directory's node if it is alive and really is it.
running_pid() {
  local pf pid
  pf="$(pid_file)"
  [ -f "$pf" ] || return 1
  pid="$(cat "$pf" 2>/dev/null || true)"
  case "$pid" in ''|*[!0-9]*) return 1 ;; esac
  kill -0 "$pid" 2>/dev/null || return 1
  # Guard against a recycled pid: the process must be our daemon for this dir.
  tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null \
    | grep -q -- "-Dcassandra.config=file://$NODE_DIR/cassandra.yaml" || return 1
  echo "$pid"
}

port_listening() { # port: listening on this node's address (or on all)
  if command -v ss >/dev/null; then
    ss -Hltn "sport = :$1" 2>/dev/null | awk '{print $4}' \
      | grep -qE "^($(printf '%s' "$HOST" | sed 's/\./\\./g')|0\.0\.0\.0|\*|\[::\]):$1\$"
  else
    (exec 3<>"/dev/tcp/$HOST/$1") 2>/dev/null
  fi
}

cql_ready() { # prints release_version on success
  python3 "$PROBE" ready "$HOST" "$NATIVE_PORT" 2>/dev/null
}

# ring_knows_node: a node of a cluster (one started with --seeds) is
# ready once it and every running peer know each other's current gossip
# generation, i.e. take each other for up: before that a peer refuses a
# quorum that needs it, or this node one that needs the peer.
ring_knows_node() {
  [ -n "$SEEDS" ] || return 0
  python3 "$PROBE" seen "$HOST" "$NATIVE_PORT" 2>/dev/null
}

read_node_settings() {
  # Recover the settings of a node started earlier with non-default
  # flags; a flag given now wins.
  local env_file="$NODE_DIR/node.env" v
  [ -f "$env_file" ] || return 0
  setting() { # flag variable key
    case "$GIVEN" in *" $1 "*) return 0 ;; esac
    v="$(sed -n "s/^$3=//p" "$env_file")"
    [ -n "$v" ] && printf -v "$2" '%s' "$v"
    return 0
  }
  setting port NATIVE_PORT NATIVE_PORT
  setting storage-port STORAGE_PORT STORAGE_PORT
  setting address HOST ADDRESS
  setting seeds SEEDS SEEDS
  setting token TOKEN TOKEN
  setting heap HEAP HEAP
  setting jmx-port JMX_PORT JMX_PORT
}

# seed_list prints the seeds as host:port for cassandra.yaml.
seed_list() {
  local seed out=""
  for seed in ${SEEDS//,/ }; do
    out+="${out:+,}$seed:$STORAGE_PORT"
  done
  printf '%s' "${out:-$HOST:$STORAGE_PORT}"
}

# ---------------------------------------------------------------- config

# commitlog_sync: periodic acknowledges a write before its commit log is
# synced (every 10 s), so a process killed with SIGKILL loses the last
# seconds of acknowledged writes. --durable syncs before acknowledging,
# a group of writes at a time.
commitlog_sync() {
  if [ "$DURABLE" = 1 ]; then
    printf 'commitlog_sync: group\ncommitlog_sync_group_window: 20ms'
  else
    printf 'commitlog_sync: periodic\ncommitlog_sync_period: 10000ms'
  fi
}

write_config() {
  local data="$NODE_DIR/data"
  mkdir -p "$data" "$NODE_DIR/logs"
  cat > "$NODE_DIR/cassandra.yaml" <<EOF
# Cassandra for local tests; written by cassandra.sh start. A node of a
# cluster has its own token and needs no bootstrap: the cluster is new. A
# node started with --replace bootstraps: it streams its ranges.
cluster_name: peloton-local
num_tokens: 1
initial_token: ${TOKEN:-0}
auto_bootstrap: $([ "$REPLACE" = 1 ] && echo true || echo false)
partitioner: org.apache.cassandra.dht.Murmur3Partitioner
endpoint_snitch: SimpleSnitch
seed_provider:
  - class_name: org.apache.cassandra.locator.SimpleSeedProvider
    parameters:
      - seeds: "$(seed_list)"

# Loopback only: nothing listens on any other interface.
listen_address: $HOST
rpc_address: $HOST
storage_port: $STORAGE_PORT
start_native_transport: true
native_transport_port: $NATIVE_PORT

data_file_directories:
  - $data/data
commitlog_directory: $data/commitlog
saved_caches_directory: $data/saved_caches
hints_directory: $data/hints
cdc_raw_directory: $data/cdc_raw

authenticator: AllowAllAuthenticator
authorizer: AllowAllAuthorizer
role_manager: CassandraRoleManager

# Small footprint and no work a throwaway node does not need.
storage_compatibility_mode: NONE
$(commitlog_sync)
commitlog_segment_size: 16MiB
commitlog_total_space: 256MiB
memtable_heap_space: 64MiB
memtable_offheap_space: 64MiB
key_cache_size: 16MiB
counter_cache_size: 0MiB
concurrent_reads: 8
concurrent_writes: 8
concurrent_counter_writes: 4
concurrent_compactors: 1
auto_snapshot: false
snapshot_before_compaction: false
incremental_backups: false
hinted_handoff_enabled: false
cdc_enabled: false
dynamic_snitch: false
disk_failure_policy: stop
commit_failure_policy: stop
materialized_views_enabled: true
sasi_indexes_enabled: true
user_defined_functions_enabled: false
EOF
  cat > "$NODE_DIR/logback.xml" <<EOF
<configuration scan="false">
  <appender name="STDOUT" class="ch.qos.logback.core.ConsoleAppender">
    <encoder>
      <pattern>%-5level [%thread] %date{ISO8601} %F:%L - %msg%n</pattern>
    </encoder>
  </appender>
  <root level="INFO">
    <appender-ref ref="STDOUT" />
  </root>
</configuration>
EOF
  printf 'NATIVE_PORT=%s\nSTORAGE_PORT=%s\nADDRESS=%s\nSEEDS=%s\nTOKEN=%s\nHEAP=%s\nJMX_PORT=%s\n' \
    "$NATIVE_PORT" "$STORAGE_PORT" "$HOST" "$SEEDS" "$TOKEN" "$HEAP" "$JMX_PORT" > "$NODE_DIR/node.env"
}

# JDK 17 module access Cassandra 5.0 needs, the server's and nodetool's.
JDK17_MODULE_OPTS=(
  --add-exports java.base/jdk.internal.misc=ALL-UNNAMED
  --add-exports java.base/jdk.internal.ref=ALL-UNNAMED
  --add-exports java.base/sun.nio.ch=ALL-UNNAMED
  --add-exports java.base/java.lang.ref=ALL-UNNAMED
  --add-exports java.management.rmi/com.sun.jmx.remote.internal.rmi=ALL-UNNAMED
  --add-exports java.rmi/sun.rmi.registry=ALL-UNNAMED
  --add-exports java.rmi/sun.rmi.server=ALL-UNNAMED
  --add-exports java.sql/java.sql=ALL-UNNAMED
  --add-exports jdk.unsupported/sun.misc=ALL-UNNAMED
  --add-exports jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED
  --add-exports jdk.attach/sun.tools.attach=ALL-UNNAMED
  --add-opens java.base/java.lang.module=ALL-UNNAMED
  --add-opens java.base/jdk.internal.loader=ALL-UNNAMED
  --add-opens java.base/jdk.internal.ref=ALL-UNNAMED
  --add-opens java.base/jdk.internal.reflect=ALL-UNNAMED
  --add-opens java.base/jdk.internal.math=ALL-UNNAMED
  --add-opens java.base/jdk.internal.module=ALL-UNNAMED
  --add-opens java.base/jdk.internal.util.jar=ALL-UNNAMED
  --add-opens jdk.management/com.sun.management.internal=ALL-UNNAMED
  --add-opens java.base/sun.nio.ch=ALL-UNNAMED
  --add-opens java.base/java.io=ALL-UNNAMED
  --add-opens java.base/java.lang.reflect=ALL-UNNAMED
  --add-opens jdk.compiler/com.sun.tools.javac=ALL-UNNAMED
  --add-opens java.base/java.lang=ALL-UNNAMED
  --add-opens java.base/java.util=ALL-UNNAMED
  --add-opens java.base/java.nio=ALL-UNNAMED
)

jvm_options() {
  local jamm
  local jars=("$LIB_DIR"/jamm-*.jar)
  jamm="${jars[0]}"
  # The ring delay bounds how long a node waits for the seeds' view of
  # the ring. A node that replaces itself must get it before it streams
  # (its shadow round): on a loaded machine a seed may take seconds to
  # answer, so it waits longer than a node that only restarts.
  local ring_delay_ms=1000
  if [ "$REPLACE" = 1 ]; then ring_delay_ms=15000; fi
  # A node that replaces another address waits the longer of the load
  # broadcast interval and twice the ring delay for news of the node it
  # replaces; the interval's default is a minute.
  local broadcast_ms=60000
  if [ "$REPLACE" = 1 ]; then broadcast_ms=$((2 * ring_delay_ms)); fi
  JVM_OPTS=(
    -Xms"$HEAP" -Xmx"$HEAP" -Xss512k
    -XX:+UseG1GC -XX:+ParallelRefProcEnabled -XX:MaxTenuringThreshold=1
    -XX:MaxGCPauseMillis=300 -XX:+UseThreadPriorities -XX:+PerfDisableSharedMem
    -XX:+HeapDumpOnOutOfMemoryError -XX:HeapDumpPath="$NODE_DIR/logs"
    -XX:+ExitOnOutOfMemoryError
    -XX:TieredStopAtLevel=1 -XX:CICompilerCount=2
    -ea -da:net.openhft...
    -javaagent:"$jamm"
    -Djava.net.preferIPv4Stack=true
    -Djdk.attach.allowAttachSelf=true
    -Dio.netty.tryReflectionSetAccessible=true
    -Dio.netty.allocator.useCacheForAllThreads=true
    -Dio.netty.allocator.maxOrder=11
    "${JDK17_MODULE_OPTS[@]}"
    # Where things are, and how the daemon runs.
    -Dcassandra.config="file://$NODE_DIR/cassandra.yaml"
    -Dcassandra.storagedir="$NODE_DIR/data"
    -Dcassandra.logdir="$NODE_DIR/logs"
    -Dlogback.configurationFile="file://$NODE_DIR/logback.xml"
    -Dcassandra-foreground=yes
    # Single throwaway node: skip the waits and durability a cluster needs.
    # JMX is opened only with --jmx-port, and then on 127.0.0.1 only
    # (cassandra.jmx.local.port; no cassandra.jmx.remote.port).
    -Dcassandra.skip_wait_for_gossip_to_settle=0
    -Dcassandra.ring_delay_ms="$ring_delay_ms"
    -Dcassandra.broadcast_interval_ms="$broadcast_ms"
    -Dcassandra.memtable.row_overhead_size=180
    -Dcassandra.test.ignore_sigar=true
    -Dcassandra.available_processors="$(nproc 2>/dev/null || echo 2)"
  )
  if [ -n "$JMX_PORT" ]; then
    JVM_OPTS+=(-Dcassandra.jmx.local.port="$JMX_PORT")
  fi
  if [ "$REPLACE" = 1 ]; then
    # The node takes the place in the ring of the node at its own address
    # (--replace) or at another (--replace-address), streaming the data of
    # its ranges from the other replicas.
    JVM_OPTS+=(-Dcassandra.replace_address_first_boot="${REPLACE_ADDRESS:-$HOST}")
  fi
  if [ "$DURABLE" = 0 ]; then
    # The system keyspaces (schema included) skip the commit log: a faster
    # start, but a node killed with SIGKILL forgets unflushed schema.
    JVM_OPTS+=(-Dcassandra.unsafesystem=true)
  fi
  if [ -n "${CASSANDRA_JVM_OPTS:-}" ]; then
    # shellcheck disable=SC2206
    JVM_OPTS+=(${CASSANDRA_JVM_OPTS})
  fi
}

# ---------------------------------------------------------------- commands

# Serialises start and stop on one node directory.
lock_node() {
  exec 9> "$NODE_DIR/.lock"
  flock 9
}

cmd_start() {
  local started pid version deadline
  check_number --port "$NATIVE_PORT"
  check_number --storage-port "$STORAGE_PORT"
  check_number --timeout "$TIMEOUT_SECONDS"
  [ -z "$JMX_PORT" ] || check_number --jmx-port "$JMX_PORT"
  command -v "$JAVA_BIN" >/dev/null || die "java ($JAVA_BIN) not found; install a JDK 17"
  command -v python3 >/dev/null || die "python3 is needed for the CQL readiness check"
  mkdir -p "$NODE_DIR"
  NODE_DIR="$(cd "$NODE_DIR" && pwd -P)"
  lock_node
  # A node started again keeps what it was started with; a clean one
  # starts from the flags alone.
  [ "$CLEAN" = 1 ] || read_node_settings
  check_loopback "$HOST"
  if [ -n "$REPLACE_ADDRESS" ]; then
    check_loopback "$REPLACE_ADDRESS"
    [ "$REPLACE_ADDRESS" != "$HOST" ] || die "--replace-address $REPLACE_ADDRESS is the node's own address: use --replace"
  fi
  if [ "$REPLACE" = 1 ]; then
    [ "$CLEAN" = 0 ] || die "--replace and --clean: --replace is for a node of a ring whose data is gone; --clean starts a new cluster"
    [ -n "$SEEDS" ] && [ "$SEEDS" != "$HOST" ] \
      || die "--replace: the node must have seeds other than itself (a node of a ring started with --seeds), it has '${SEEDS:-none}'"
    [ ! -d "$NODE_DIR/data/data/system" ] \
      || die "--replace: $NODE_DIR/data still holds the node's data; remove it first (the node takes its place again only when its data is gone)"
  fi

  if pid="$(running_pid)"; then
    [ "$CLEAN" = 1 ] && log "--clean ignored: the node is running (stop it first)"
    log "already running (pid $pid) in $NODE_DIR; waiting for CQL on $HOST:$NATIVE_PORT"
  else
    cmd_fetch
    for port in "$NATIVE_PORT" "$STORAGE_PORT" ${JMX_PORT:+"$JMX_PORT"}; do
      port_listening "$port" && die "port $port on this machine is already in use; pick another with --port/--storage-port"
    done
    if [ "$CLEAN" = 1 ]; then
      rm -rf "$NODE_DIR/data"
    fi
    write_config
    jvm_options
    : > "$(log_file)"
    started=$(now_millis)
    # setsid detaches the daemon from this shell's session; the inner shell
    # records its own pid, which exec hands on to java. The lock descriptors
    # are closed so that the daemon never holds them.
    # shellcheck disable=SC2016
    setsid bash -c 'echo $$ > "$1"; shift; exec "$@"' _ "$(pid_file)" \
      "$JAVA_BIN" "${JVM_OPTS[@]}" -cp "$LIB_DIR/*" \
      org.apache.cassandra.service.CassandraDaemon \
      >> "$(log_file)" 2>&1 < /dev/null 8>&- 9>&- &
    # Wait for the pid file the inner shell writes.
    for _ in $(seq 1 50); do
      [ -s "$(pid_file)" ] && break
      sleep 0.1
    done
    log "started Cassandra $CASSANDRA_VERSION (pid $(cat "$(pid_file)" 2>/dev/null || echo '?')), dir $NODE_DIR, CQL $HOST:$NATIVE_PORT, heap $HEAP${JMX_PORT:+, JMX 127.0.0.1:$JMX_PORT}$([ "$REPLACE" = 1 ] && echo ", taking the place in the ring of ${REPLACE_ADDRESS:-its own address}")"
  fi

  started=${started:-$(now_millis)}
  deadline=$(( $(date +%s) + TIMEOUT_SECONDS ))
  while :; do
    if ! running_pid >/dev/null; then
      log "Cassandra exited before answering CQL; its errors, then the last lines of $(log_file):"
      grep -E "ERROR|Exception|Cannot |Unable " "$(log_file)" | tail -n 15 >&2 || true
      tail -n 25 "$(log_file)" >&2 || true
      exit 1
    fi
    if port_listening "$NATIVE_PORT" && version="$(cql_ready)" && ring_knows_node; then
      log "CQL ready on $HOST:$NATIVE_PORT (Cassandra $version) after $(elapsed_since "$started")"
      return 0
    fi
    if [ "$(date +%s)" -ge "$deadline" ]; then
      log "CQL not ready on $HOST:$NATIVE_PORT after ${TIMEOUT_SECONDS}s; last lines of $(log_file):"
      tail -n 40 "$(log_file)" >&2 || true
      if pid="$(running_pid)"; then
        log "killing the unready node (pid $pid) so that no half-started server is left behind"
        kill -KILL "$pid" 2>/dev/null || true
        while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
      fi
      exit 1
    fi
    sleep 0.5
  done
}

cmd_stop() {
  local pid waited=0
  check_number --grace "$STOP_GRACE_SECONDS"
  [ -d "$NODE_DIR" ] || { log "not running (no $NODE_DIR)"; return 0; }
  NODE_DIR="$(cd "$NODE_DIR" && pwd -P)"
  lock_node
  read_node_settings
  if ! pid="$(running_pid)"; then
    rm -f "$(pid_file)"
    log "not running"
    return 0
  fi
  if [ "$KILL_NOW" = 1 ]; then
    log "killing pid $pid (SIGKILL)"
    kill -KILL "$pid" 2>/dev/null || true
  else
    log "stopping pid $pid (SIGTERM, SIGKILL after ${STOP_GRACE_SECONDS}s)"
    kill -TERM "$pid" 2>/dev/null || true
  fi
  while kill -0 "$pid" 2>/dev/null; do
    if [ "$waited" -ge $((STOP_GRACE_SECONDS * 10)) ]; then
      log "still alive after ${STOP_GRACE_SECONDS}s; sending SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
      break
    fi
    sleep 0.1
    waited=$((waited + 1))
  done
  # Wait for the process to be gone and its listening ports released.
  for _ in $(seq 1 100); do
    if ! kill -0 "$pid" 2>/dev/null \
        && ! port_listening "$NATIVE_PORT" && ! port_listening "$STORAGE_PORT"; then
      rm -f "$(pid_file)"
      log "stopped; ports $NATIVE_PORT and $STORAGE_PORT are free"
      return 0
    fi
    sleep 0.1
  done
  die "pid $pid stopped but port $NATIVE_PORT or $STORAGE_PORT is still in use"
}

cmd_status() {
  local pid version
  [ -d "$NODE_DIR" ] && NODE_DIR="$(cd "$NODE_DIR" && pwd -P)"
  read_node_settings
  if ! pid="$(running_pid)"; then
    echo "stopped ($NODE_DIR)"
    return 3
  fi
  if version="$(cql_ready)"; then
    echo "running pid $pid, CQL ready on $HOST:$NATIVE_PORT, Cassandra $version ($NODE_DIR)"
    return 0
  fi
  echo "running pid $pid, CQL not answering yet on $HOST:$NATIVE_PORT ($NODE_DIR)"
  return 4
}

# nodetool runs Cassandra's nodetool from the cached jars against the
# node's JMX port (a node started with --jmx-port).
cmd_nodetool() {
  [ "${#REST[@]}" -gt 0 ] || die "nodetool needs a command, e.g. nodetool status"
  [ -d "$NODE_DIR" ] && NODE_DIR="$(cd "$NODE_DIR" && pwd -P)"
  read_node_settings
  [ -n "$JMX_PORT" ] || die "the node in $NODE_DIR has no JMX port: start it with --jmx-port N"
  lib_complete || die "Cassandra $CASSANDRA_VERSION's jars are not in $LIB_DIR: run cassandra.sh fetch"
  # The tool logs warnings only, to stderr.
  cat > "$NODE_DIR/logback-tools.xml" <<EOF
<configuration scan="false">
  <appender name="STDERR" class="ch.qos.logback.core.ConsoleAppender">
    <target>System.err</target>
    <encoder><pattern>%-5level %msg%n</pattern></encoder>
  </appender>
  <root level="WARN"><appender-ref ref="STDERR" /></root>
</configuration>
EOF
  "$JAVA_BIN" -Xmx128M -XX:TieredStopAtLevel=1 "${JDK17_MODULE_OPTS[@]}" \
    -Dlogback.configurationFile="file://$NODE_DIR/logback-tools.xml" \
    -cp "$LIB_DIR/*" org.apache.cassandra.tools.NodeTool -h 127.0.0.1 -p "$JMX_PORT" "${REST[@]}"
}

cmd_cql() {
  [ "${#REST[@]}" -gt 0 ] || die "cql needs at least one statement"
  [ -d "$NODE_DIR" ] && NODE_DIR="$(cd "$NODE_DIR" && pwd -P)"
  read_node_settings
  python3 "$PROBE" query "$HOST" "$NATIVE_PORT" "${REST[@]}"
}

# ---------------------------------------------------------------- cluster

# node_address prints the address of node i (1-based) of the cluster.
node_address() {
  local prefix="${FIRST_ADDRESS%.*}" last="${FIRST_ADDRESS##*.}"
  [ $((last + $1 - 1)) -le 254 ] || die "--first-address $FIRST_ADDRESS leaves no room for $NODES nodes"
  echo "$prefix.$((last + $1 - 1))"
}

# node_token prints node i's token: N tokens spread evenly over the
# Murmur3 ring, so that each node owns a third of it when N is 3.
node_token() {
  python3 -c 'import sys; i, n = int(sys.argv[1]), int(sys.argv[2]); print(-2**63 + (i - 1) * (2**64 // n))' "$1" "$NODES"
}

# node_jmx prints the --jmx-port flag of node i (nothing without --jmx-port).
node_jmx() {
  [ -z "$JMX_PORT" ] || echo "--jmx-port $((JMX_PORT + $1 - 1))"
}

# cluster_nodes lists the cluster's node directories.
cluster_nodes() {
  local d
  for d in "$CLUSTER_DIR"/node*/; do
    [ -f "$d/node.env" ] && echo "${d%/}"
  done
  return 0
}

# cluster_hosts prints the contact points, host:port, comma separated.
cluster_hosts() {
  local d out="" addr port
  while IFS= read -r d; do
    addr="$(sed -n 's/^ADDRESS=//p' "$d/node.env")"
    port="$(sed -n 's/^NATIVE_PORT=//p' "$d/node.env")"
    out+="${out:+,}$addr:$port"
  done < <(cluster_nodes)
  echo "$out"
}

cmd_cluster() {
  local sub="${REST[0]:-}" self="${BASH_SOURCE[0]}" i addr seed pids=() failed=0 started flags=()
  case "$GIVEN" in *" dir "*) CLUSTER_DIR="$NODE_DIR" ;; *) CLUSTER_DIR="$CACHE_ROOT/cluster" ;; esac
  case "$sub" in
    start)
      check_number --nodes "$NODES"
      [ "$NODES" -ge 1 ] || die "--nodes must be at least 1"
      check_loopback "$FIRST_ADDRESS"
      check_number --port "$NATIVE_PORT"
      check_number --storage-port "$STORAGE_PORT"
      cmd_fetch
      mkdir -p "$CLUSTER_DIR"
      CLUSTER_DIR="$(cd "$CLUSTER_DIR" && pwd -P)"
      case "$GIVEN" in *" heap "*) ;; *) HEAP=384M ;; esac
      [ -z "$JMX_PORT" ] || check_number --jmx-port "$JMX_PORT"
      flags=(--port "$NATIVE_PORT" --storage-port "$STORAGE_PORT" --heap "$HEAP" --timeout "$TIMEOUT_SECONDS")
      [ "$CLEAN" = 1 ] && flags+=(--clean)
      [ "$DURABLE" = 1 ] && flags+=(--durable)
      seed="$(node_address 1)"
      started=$(now_millis)
      # The seed first: the others gossip with it to join. Then the rest
      # at once (a new cluster: nothing to stream, each has its token).
      bash "$self" start --dir "$CLUSTER_DIR/node1" --address "$seed" --seeds "$seed" --token "$(node_token 1)" $(node_jmx 1) "${flags[@]}" || exit 1
      for i in $(seq 2 "$NODES"); do
        addr="$(node_address "$i")"
        bash "$self" start --dir "$CLUSTER_DIR/node$i" --address "$addr" --seeds "$seed" --token "$(node_token "$i")" $(node_jmx "$i") "${flags[@]}" &
        pids+=($!)
      done
      for i in "${pids[@]}"; do wait "$i" || failed=1; done
      if [ "$failed" = 1 ]; then
        log "a node failed to start; stopping the cluster"
        KILL_NOW=1
        REST=(stop)
        cmd_cluster || true
        exit 1
      fi
      log "cluster of $NODES nodes ready after $(elapsed_since "$started"): $(cluster_hosts)"
      ;;
    stop)
      [ -d "$CLUSTER_DIR" ] || { log "not running (no $CLUSTER_DIR)"; return 0; }
      flags=(--grace "$STOP_GRACE_SECONDS")
      [ "$KILL_NOW" = 1 ] && flags+=(--kill)
      while IFS= read -r i; do
        bash "$self" stop --dir "$i" "${flags[@]}" &
        pids+=($!)
      done < <(cluster_nodes)
      for i in "${pids[@]}"; do wait "$i" || failed=1; done
      return "$failed"
      ;;
    status)
      [ -d "$CLUSTER_DIR" ] || { echo "stopped (no $CLUSTER_DIR)"; return 3; }
      while IFS= read -r i; do
        printf '%s: ' "$(basename "$i")"
        bash "$self" status --dir "$i" || failed=1
      done < <(cluster_nodes)
      echo "contact points: $(cluster_hosts)"
      return "$failed"
      ;;
    hosts) cluster_hosts ;;
    *) die "usage: cassandra.sh cluster start|stop|status|hosts --dir DIR [options]" ;;
  esac
}

main() {
  local cmd="${1:-}"
  [ $# -gt 0 ] && shift
  REST=()
  parse_flags "$@"
  if [ "$cmd" = cluster ] && [ "${#REST[@]}" -ne 1 ]; then
    die "usage: cassandra.sh cluster start|stop|status|hosts --dir DIR [options]"
  elif [ "$cmd" != cql ] && [ "$cmd" != cluster ] && [ "$cmd" != nodetool ] && [ "${#REST[@]}" -gt 0 ]; then
    die "unexpected argument for $cmd: ${REST[0]} (see --help)"
  fi
  case "$cmd" in
    fetch) cmd_fetch ;;
    check) cmd_check ;;
    start) cmd_start ;;
    stop) cmd_stop ;;
    status) cmd_status ;;
    cql) cmd_cql ;;
    nodetool) cmd_nodetool ;;
    cluster) cmd_cluster ;;
    logs) echo "$NODE_DIR/cassandra.log" ;;
    -h|--help|help|'') usage ;;
    *) die "unknown command: $cmd (see --help)" ;;
  esac
}

main "$@"
