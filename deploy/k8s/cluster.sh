#!/usr/bin/env bash
# A throwaway Kubernetes control plane on loopback for tests and benchmarks:
# etcd, kube-apiserver and kube-scheduler (built from the modules Kubernetes
# itself uses, in ./tools) and kwok (fake nodes and kubelets).
#
#   cluster.sh build            build what is missing into the cache
#   cluster.sh bin-dir          print the cache's bin directory
#   cluster.sh start DIR        start etcd + kube-apiserver + kwok; DIR gets
#                               kubeconfig, logs, pids and an env file
#   cluster.sh start-scheduler DIR   add kube-scheduler to a started cluster
#   cluster.sh stop DIR         stop what start put in DIR
#   cluster.sh add-nodes DIR N [CPU] [MEM] [PREFIX]
#                               add N fake nodes kwok keeps Ready (4, 8Gi, node)
#
# Binaries are cached per version under
# ${PELOTON_CACHE:-$HOME/.cache/peloton}/k8s/<version>/bin and reused.
set -euo pipefail


here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
K8S_VERSION="v1.34.4"
KWOK_VERSION="v0.7.0"
cache_root="${PELOTON_CACHE:-$HOME/.cache/peloton}/k8s"
ETCD_VERSION="v3.6.4"
bin_dir="$cache_root/$K8S_VERSION-etcd-$ETCD_VERSION-kwok-$KWOK_VERSION/bin"

die() { echo "cluster.sh: $*" >&2; exit 1; }

# ---- build ---------------------------------------------------------------

# build_kube NAME builds ./tools/NAME (etcd, kube-apiserver, kube-scheduler).
build_kube() {
  local name=$1
  if [ -x "$bin_dir/$name" ]; then return 0; fi
  echo "cluster.sh: building $name $K8S_VERSION (a few minutes, cached afterwards)" >&2
  mkdir -p "$bin_dir"
  (cd "$here/tools" && GOFLAGS=-mod=readonly CGO_ENABLED=0 go build -trimpath -ldflags=-s -o "$bin_dir/$name.tmp" "./$name")
  mv "$bin_dir/$name.tmp" "$bin_dir/$name"
}

build_kwok() {
  if [ -x "$bin_dir/kwok" ]; then return 0; fi
  echo "cluster.sh: building kwok $KWOK_VERSION" >&2
  mkdir -p "$bin_dir"
  local tmp; tmp="$(mktemp -d)"
  (cd "$tmp" && GOFLAGS= CGO_ENABLED=0 GOBIN="$tmp" go install -trimpath "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION")
  mv "$tmp/kwok" "$bin_dir/kwok"
  rm -rf "$tmp"
}

cmd_build() {
  build_kube etcd
  build_kube kube-apiserver
  build_kube kube-scheduler
  build_kwok
  echo "cluster.sh: ready in $bin_dir" >&2
}

# ---- start / stop --------------------------------------------------------

# free_port prints a TCP port on 127.0.0.1 that nothing listens on.
free_port() {
  local p
  for _ in $(seq 200); do
    p=$(( 20000 + RANDOM % 40000 ))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return 0; fi
  done
  die "no free port found"
}

# wait_for TRIES CMD... retries CMD every 0.2s until it succeeds.
wait_for() {
  local tries=$1; shift
  for _ in $(seq "$tries"); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  return 1
}

need_bins() {
  for b in etcd kube-apiserver kwok "$@"; do
    [ -x "$bin_dir/$b" ] || die "$b is not built in $bin_dir: run '$0 build' first"
  done
}

# spawn NAME DIR CMD... starts CMD in the background, logging to
# DIR/logs/NAME.log, and records its pid in DIR/pids/NAME.
spawn() {
  local name=$1 dir=$2; shift 2
  mkdir -p "$dir/logs" "$dir/pids"
  setsid "$@" >"$dir/logs/$name.log" 2>&1 </dev/null &
  echo $! >"$dir/pids/$name"
}

alive() { [ -f "$1/pids/$2" ] && kill -0 "$(cat "$1/pids/$2")" 2>/dev/null; }

# port_taken reports whether NAME failed because its port was taken, and
# stops what is left of it.
port_taken() {
  local dir=$1 name=$2
  grep -q "address already in use" "$dir/logs/$name.log" 2>/dev/null || return 1
  if alive "$dir" "$name"; then kill "$(cat "$dir/pids/$name")" 2>/dev/null || true; fi
  return 0
}

fail_start() {
  local dir=$1 name=$2
  echo "cluster.sh: $name did not come up; last lines of $dir/logs/$name.log:" >&2
  tail -n 30 "$dir/logs/$name.log" >&2 || true
  cmd_stop "$dir"
  exit 1
}

make_certs() {
  local pki=$1
  mkdir -p "$pki"
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=peloton-test-ca" \
    -keyout "$pki/ca.key" -out "$pki/ca.crt" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -subj "/CN=kube-apiserver" \
    -keyout "$pki/apiserver.key" -out "$pki/apiserver.csr" 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes.default.svc\n' >"$pki/san.ext"
  openssl x509 -req -in "$pki/apiserver.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
    -days 2 -extfile "$pki/san.ext" -out "$pki/apiserver.crt" 2>/dev/null
  openssl genrsa -out "$pki/sa.key" 2048 2>/dev/null
  openssl rsa -in "$pki/sa.key" -pubout -out "$pki/sa.pub" 2>/dev/null
}

write_kubeconfig() {
  local file=$1 server=$2 ca=$3 token=$4
  cat >"$file" <<KUBECONFIG
apiVersion: v1
kind: Config
clusters:
- name: test
  cluster:
    server: $server
    certificate-authority: $ca
users:
- name: admin
  user:
    token: $token
contexts:
- name: test
  context:
    cluster: test
    user: admin
    namespace: default
current-context: test
KUBECONFIG
}

cmd_start() {
  local dir=${1:?usage: cluster.sh start DIR}
  need_bins
  mkdir -p "$dir"
  dir="$(cd "$dir" && pwd)"
  local etcd_port peer_port api_port kwok_port token
  etcd_port=$(free_port); peer_port=$(free_port); api_port=$(free_port); kwok_port=$(free_port)
  token="$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')"
  make_certs "$dir/pki"
  printf '%s,admin,admin,"system:masters"\n' "$token" >"$dir/pki/tokens.csv"

  local etcd_data="${PELOTON_K8S_ETCD_DIR:-$dir/etcd}"
  # A free port can be taken by another process before etcd binds it (many
  # test processes start clusters at once): then try again on other ports.
  local attempt
  for attempt in 1 2 3; do
    spawn etcd "$dir" "$bin_dir/etcd" --name test --data-dir "$etcd_data" \
      --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
      --listen-peer-urls "http://127.0.0.1:$peer_port" --initial-advertise-peer-urls "http://127.0.0.1:$peer_port" \
      --initial-cluster "test=http://127.0.0.1:$peer_port" --quota-backend-bytes 4294967296 \
      --unsafe-no-fsync --log-level warn
    wait_for 100 curl -sf "http://127.0.0.1:$etcd_port/health" && break
    if [ "$attempt" -lt 3 ] && port_taken "$dir" etcd; then
      rm -rf "$etcd_data"
      etcd_port=$(free_port); peer_port=$(free_port)
      continue
    fi
    fail_start "$dir" etcd
  done

  # No controller manager runs here: without ServiceAccount admission pods
  # need no service account, and without TaintNodesByCondition new nodes are
  # not tainted not-ready with nobody to lift the taint.
  for attempt in 1 2 3; do
    spawn kube-apiserver "$dir" "$bin_dir/kube-apiserver" \
      --etcd-servers "http://127.0.0.1:$etcd_port" \
      --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$api_port" \
      --tls-cert-file "$dir/pki/apiserver.crt" --tls-private-key-file "$dir/pki/apiserver.key" \
      --client-ca-file "$dir/pki/ca.crt" --token-auth-file "$dir/pki/tokens.csv" \
      --authorization-mode RBAC \
      --service-account-issuer https://kubernetes.default.svc \
      --service-account-key-file "$dir/pki/sa.pub" --service-account-signing-key-file "$dir/pki/sa.key" \
      --service-cluster-ip-range 10.96.0.0/16 --endpoint-reconciler-type none \
      --disable-admission-plugins ServiceAccount,TaintNodesByCondition \
      --max-requests-inflight 2000 --max-mutating-requests-inflight 1000 \
      --profiling=false
    wait_for 300 curl -sf --cacert "$dir/pki/ca.crt" -H "Authorization: Bearer $token" \
      "https://127.0.0.1:$api_port/readyz" && break
    if [ "$attempt" -lt 3 ] && port_taken "$dir" kube-apiserver; then
      api_port=$(free_port)
      continue
    fi
    fail_start "$dir" kube-apiserver
  done

  write_kubeconfig "$dir/kubeconfig" "https://127.0.0.1:$api_port" "$dir/pki/ca.crt" "$token"
  # kwok's own port can be taken before it binds it too (as etcd's above).
  for attempt in 1 2 3; do
    spawn kwok "$dir" "$bin_dir/kwok" --kubeconfig "$dir/kubeconfig" \
      --config "$here/kwok-stages.yaml" \
      --manage-all-nodes=false --manage-nodes-with-annotation-selector kwok.x-k8s.io/node=fake \
      --server-address "127.0.0.1:$kwok_port" --node-lease-duration-seconds 40
    sleep 0.5
    if alive "$dir" kwok && ! grep -q "address already in use" "$dir/logs/kwok.log" 2>/dev/null; then
      break
    fi
    if [ "$attempt" -lt 3 ] && port_taken "$dir" kwok; then
      kwok_port=$(free_port)
      continue
    fi
    fail_start "$dir" kwok
  done

  cat >"$dir/env" <<ENV
KUBECONFIG=$dir/kubeconfig
K8S_API_SERVER=https://127.0.0.1:$api_port
K8S_TOKEN=$token
ETCD_ENDPOINT=http://127.0.0.1:$etcd_port
ENV
  echo "cluster.sh: started in $dir (kubeconfig $dir/kubeconfig)" >&2
}

cmd_start_scheduler() {
  local dir=${1:?usage: cluster.sh start-scheduler DIR}; shift
  need_bins kube-scheduler
  dir="$(cd "$dir" && pwd)"
  [ -f "$dir/kubeconfig" ] || die "$dir has no started cluster"
  local port; port=$(free_port)
  # Extra arguments (such as --config FILE) replace the default connection.
  local conn=(--kubeconfig "$dir/kubeconfig" --leader-elect=false)
  [ $# -gt 0 ] && conn=("$@")
  spawn kube-scheduler "$dir" "$bin_dir/kube-scheduler" "${conn[@]}" \
    --authentication-kubeconfig "$dir/kubeconfig" --authorization-kubeconfig "$dir/kubeconfig" \
    --bind-address 127.0.0.1 --secure-port "$port"
  sleep 0.5
  alive "$dir" kube-scheduler || fail_start "$dir" kube-scheduler
}

# cmd_stop stops what cmd_start recorded in DIR, in reverse order.
cmd_stop() {
  local dir=${1:?usage: cluster.sh stop DIR} name pid
  for name in kube-scheduler kwok kube-apiserver etcd; do
    [ -f "$dir/pids/$name" ] || continue
    pid=$(cat "$dir/pids/$name")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    rm -f "$dir/pids/$name"
  done
}

# cmd_add_nodes creates fake nodes (kwok keeps them Ready) named
# PREFIX-1..N with CPU cores and MEM memory each, through the API server.
cmd_add_nodes() {
  local dir=${1:?usage: cluster.sh add-nodes DIR N [CPU] [MEM] [PREFIX]} n=${2:?usage: cluster.sh add-nodes DIR N [CPU] [MEM] [PREFIX]}
  local cpu=${3:-4} mem=${4:-8Gi} prefix=${5:-node} i name
  # shellcheck disable=SC1091
  . "$dir/env"
  local api=(curl -sf --cacert "$dir/pki/ca.crt" -H "Authorization: Bearer $K8S_TOKEN")
  for i in $(seq "$n"); do
    name="$prefix-$i"
    "${api[@]}" -X POST -H 'Content-Type: application/json' "$K8S_API_SERVER/api/v1/nodes" \
      -d "{\"metadata\":{\"name\":\"$name\",\"annotations\":{\"kwok.x-k8s.io/node\":\"fake\"}}}" >/dev/null ||
      { echo "cluster.sh: creating node $name failed" >&2; exit 1; }
    "${api[@]}" -X PATCH -H 'Content-Type: application/merge-patch+json' "$K8S_API_SERVER/api/v1/nodes/$name/status" \
      -d "{\"status\":{\"capacity\":{\"cpu\":\"$cpu\",\"memory\":\"$mem\",\"pods\":\"1000\"},\"allocatable\":{\"cpu\":\"$cpu\",\"memory\":\"$mem\",\"pods\":\"1000\"}}}" >/dev/null ||
      { echo "cluster.sh: sizing node $name failed" >&2; exit 1; }
  done
  echo "cluster.sh: $n fake nodes $prefix-1..$n ($cpu cores, $mem each)" >&2
}

# ---- dispatch ------------------------------------------------------------

case "${1:-}" in
  build) cmd_build ;;
  bin-dir) echo "$bin_dir" ;;
  start) shift; cmd_start "$@" ;;
  start-scheduler) shift; cmd_start_scheduler "$@" ;;
  stop) shift; cmd_stop "$@" ;;
  add-nodes) shift; cmd_add_nodes "$@" ;;
  *) sed -n '2,14p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
