#!/usr/bin/env bash
# tests/images/registry.sh: a container registry on 127.0.0.1 for pjemu's tests and benchmark
# (Debian's docker-registry, distribution 2.8), and pushes to it with skopeo. Nothing leaves the
# machine: the registry listens on 127.0.0.1 only, with no notifications, no redis, no debug or
# metrics listener and no reporting.
#
#   registry.sh start DIR [--htpasswd USER:PASS] [--port N]
#       Starts `docker-registry serve DIR/config.yml` on 127.0.0.1:N (a free port when N is not
#       given), storage under DIR/storage, the log in DIR/registry.log; with --htpasswd, basic
#       auth for USER (bcrypt, htpasswd -Bbn). Writes DIR/port and DIR/pid, waits until
#       GET /v2/ answers 200 or 401, and prints the address, 127.0.0.1:PORT.
#   registry.sh push DIR OCI_LAYOUT_DIR NAME:TAG [--creds USER:PASS]
#       skopeo copy oci:OCI_LAYOUT_DIR docker://127.0.0.1:PORT/NAME:TAG (plain HTTP, digests
#       preserved), PORT from DIR/port.
#   registry.sh stop DIR
#       Stops the registry started in DIR and waits until it is gone (SIGTERM, then SIGKILL).
#   registry.sh -h | --help
#       This text.
#
# Exit status: 0 on success, 1 on failure, 2 on a usage error, 77 when docker-registry (or
# skopeo for push, htpasswd for --htpasswd) is not installed (tools/setup installs them).
set -euo pipefail

usage() { sed -n '2,/^$/s/^# \{0,1\}//p' "$0"; }
die() { echo "registry.sh: $*" >&2; exit 1; }
need() {  # need TOOL HINT: exit 77 without TOOL
  command -v "$1" >/dev/null 2>&1 && return 0
  echo "registry.sh: $1 is not installed ($2)" >&2
  exit 77
}

REGISTRY_BIN=/usr/bin/docker-registry

free_port() {  # a port the kernel would give now (the start retries if it is taken meanwhile)
  /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}

# http_status PORT: the status code of GET /v2/ on 127.0.0.1:PORT, or nothing.
http_status() (
  exec 2>/dev/null
  exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 0
  printf 'GET /v2/ HTTP/1.0\r\nHost: 127.0.0.1:%s\r\n\r\n' "$1" >&3
  local line="" code=""
  IFS= read -r -t 5 line <&3 || true
  read -r _ code _ <<<"$line" || true
  echo "$code"
)

# alive PID: true while PID exists and is not a zombie.
alive() {
  local state
  state=$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$1/status" 2>/dev/null) || return 1
  [[ -n $state && $state != Z ]]
}

# running DIR: true when DIR/pid names a live docker-registry serving DIR/config.yml.
running() {
  local pid
  pid=$(cat "$1/pid" 2>/dev/null) || return 1
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF "$1/config.yml"
}

cmd_start() {
  local dir="" creds="" port="" want_port=""
  while (($#)); do
    case $1 in
      --htpasswd) creds=${2:?--htpasswd needs USER:PASS}; shift 2 ;;
      --port) want_port=${2:?--port needs a number}; shift 2 ;;
      -*) echo "registry.sh start: unknown option $1" >&2; exit 2 ;;
      *) [[ -z $dir ]] || { echo "registry.sh start: one DIR" >&2; exit 2; }; dir=$1; shift ;;
    esac
  done
  [[ -n $dir ]] || { usage >&2; exit 2; }
  need "$REGISTRY_BIN" "apt-get install docker-registry"
  mkdir -p "$dir/storage"
  dir=$(cd "$dir" && pwd)
  if running "$dir"; then
    die "a registry already runs from $dir (pid $(cat "$dir/pid")); stop it first"
  fi
  local auth=""
  if [[ -n $creds ]]; then
    need htpasswd "apt-get install apache2-utils"
    [[ $creds == *:* ]] || die "--htpasswd wants USER:PASS"
    htpasswd -Bbn "${creds%%:*}" "${creds#*:}" >"$dir/htpasswd" 2>/dev/null || die "htpasswd failed"
    auth=$'auth:\n  htpasswd:\n    realm: pjemu-test-registry\n    path: '"$dir/htpasswd"
  fi
  # Settings from the environment (REGISTRY_*) would override the file: drop them.
  local v
  for v in $(compgen -e | grep '^REGISTRY_' || true); do unset "$v"; done
  local _
  for _ in 1 2 3 4 5; do
    port=${want_port:-$(free_port)}
    cat >"$dir/config.yml" <<EOF
# Written by tests/images/registry.sh: loopback only, nothing external.
version: 0.1
log:
  level: info
  formatter: text
  fields:
    service: pjemu-test-registry
storage:
  filesystem:
    rootdirectory: $dir/storage
  delete:
    enabled: true
  cache:
    blobdescriptor: inmemory
  maintenance:
    uploadpurging:
      enabled: false
    readonly:
      enabled: false
  redirect:
    disable: true
http:
  addr: 127.0.0.1:$port
  secret: $(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
  headers:
    X-Content-Type-Options: [nosniff]
health:
  storagedriver:
    enabled: false
$auth
EOF
    rm -f "$dir/port" "$dir/pid"
    # setsid: its own session, so the caller's terminal signals and job control leave it be.
    setsid "$REGISTRY_BIN" serve "$dir/config.yml" </dev/null >>"$dir/registry.log" 2>&1 &
    local pid=$!
    echo "$pid" >"$dir/pid"
    local status=""
    for _ in $(seq 1 100); do
      kill -0 "$pid" 2>/dev/null || break
      status=$(http_status "$port" || true)
      [[ $status == 200 || $status == 401 ]] && break
      sleep 0.1
    done
    if [[ $status == 200 || $status == 401 ]]; then
      echo "$port" >"$dir/port"
      echo "127.0.0.1:$port"
      return 0
    fi
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    rm -f "$dir/pid"
    [[ -z $want_port ]] || break  # a port that was asked for: no other try
  done
  tail -n 20 "$dir/registry.log" >&2 || true
  die "docker-registry did not answer on 127.0.0.1:$port (log: $dir/registry.log)"
}

cmd_push() {
  local dir="" layout="" ref="" creds=""
  while (($#)); do
    case $1 in
      --creds) creds=${2:?--creds needs USER:PASS}; shift 2 ;;
      -*) echo "registry.sh push: unknown option $1" >&2; exit 2 ;;
      *)
        if [[ -z $dir ]]; then dir=$1
        elif [[ -z $layout ]]; then layout=$1
        elif [[ -z $ref ]]; then ref=$1
        else echo "registry.sh push: too many arguments" >&2; exit 2
        fi
        shift ;;
    esac
  done
  [[ -n $ref ]] || { usage >&2; exit 2; }
  need skopeo "apt-get install skopeo"
  [[ -f $dir/port ]] || die "no registry started in $dir"
  [[ -f $layout/index.json ]] || die "$layout is not an OCI image layout (no index.json)"
  local port args=(--insecure-policy copy --quiet --preserve-digests --dest-tls-verify=false
                   --retry-times 0)
  port=$(cat "$dir/port")
  [[ -z $creds ]] || args+=(--dest-creds "$creds")
  skopeo "${args[@]}" "oci:$layout" "docker://127.0.0.1:$port/$ref"
}

cmd_stop() {
  local dir=${1:?registry.sh stop DIR}
  [[ -d $dir ]] || die "no such directory: $dir"
  dir=$(cd "$dir" && pwd)
  if ! running "$dir"; then
    rm -f "$dir/pid" "$dir/port"
    return 0
  fi
  local pid
  pid=$(cat "$dir/pid")
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 50); do
    alive "$pid" || break
    sleep 0.1
  done
  if alive "$pid"; then
    kill -KILL "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do alive "$pid" || break; sleep 0.1; done
  fi
  rm -f "$dir/pid" "$dir/port"
}

case ${1:-} in
  -h|--help) usage; exit 0 ;;
  start) shift; cmd_start "$@" ;;
  push) shift; cmd_push "$@" ;;
  stop) shift; cmd_stop "$@" ;;
  *) usage >&2; exit 2 ;;
esac
