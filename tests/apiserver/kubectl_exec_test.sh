#!/bin/bash
# Client test: pods/exec and pods/portforward through one kubectl against `pjemu serve` over
# HTTPS. A PyTorchJob's master (busybox sleeping, env FOO=bar) runs. kubectl 1.30 and newer
# exec over WebSocket (v5.channel.k8s.io), older ones over SPDY/3.1 (v4.channel.k8s.io); in
# both: `exec -- env` shows the container's environment
# (the operator's MASTER_ADDR and RANK, FOO); `exec -i -- sh -c 'cat; exit 3'` gets stdin and
# exits 3; `kubectl cp` (tar over exec) puts a file in the container; as root (the sandbox)
# the command sees the container's UTS namespace (hostname = the pod's name) and the file is in
# the container's private /tmp, not the host's, `ps` shows only the container's processes (its
# command is PID 1 of its own PID namespace) and `kill 1` ends the container (restarted), not the
# host's init; an unknown container and a missing program are refused
# with the real messages. kubectl port-forward (SPDY, tunnelled in a WebSocket from 1.31)
# reaches a pod's HTTP server twice over one forward, and a port nothing listens on gets the
# kubelet's error.
# Usage: kubectl_exec_test.sh KUBECTL PJEMU
set -uo pipefail
K=$1 PJEMU=$2
if [ ! -x "$K" ]; then echo "SKIP: $K is not present"; exit 0; fi
. "$(dirname "$0")/../support/serve_kubectl.sh"

start_serve
minor=$("$K" version --client -o json 2>/dev/null | sed -n 's/.*"minor": *"\([0-9]*\).*/\1/p' | head -1)
echo "kubectl minor version: $minor"
cat >"$work/job.yaml" <<'EOF'
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: execme
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      restartPolicy: OnFailure
      template:
        spec:
          terminationGracePeriodSeconds: 1
          containers:
            - name: pytorch
              image: busybox
              workingDir: /tmp
              command: [sh, -c, 'trap "exit 143" TERM; while :; do sleep 0.2; done']
              env:
                - name: FOO
                  value: bar
EOF
pod=execme-master-0
expect_match "create job" 'pytorchjob.kubeflow.org/execme created' "$(kc create -f "$work/job.yaml" 2>&1)"
for _ in $(seq 300); do
  [ "$(kc get pod $pod -o jsonpath='{.status.phase}' 2>/dev/null)" = Running ] && break
  sleep 0.1
done
expect_match "pod running" '^Running$' "$(kc get pod $pod -o jsonpath='{.status.phase}' 2>&1)"

out=$(kc exec $pod -- env 2>&1)
expect_match "exec env: MASTER_ADDR" '^MASTER_ADDR=' "$out"
expect_match "exec env: RANK" '^RANK=0$' "$out"
expect_match "exec env: FOO" '^FOO=bar$' "$out"
out=$(printf 'hello\nworld\n' | kc exec -i $pod -- sh -c 'cat; exit 3' 2>&1)
rc=$?
[ $rc -eq 3 ] || fail "exec -i exit 3: rc $rc: $out"
expect_match "exec -i stdin" '^hello$' "$out"
expect_match "exec -i stdin" '^world$' "$out"
expect_match "exec exit message" 'command terminated with exit code 3' "$out"
out=$(kc exec $pod -- sh -c 'echo to-stderr >&2; pwd' 2>"$work/stderr")
expect_match "exec stdout" '^/tmp$' "$out"
expect_match "exec stderr" '^to-stderr$' "$(cat "$work/stderr")"
copied=/tmp/pjemu-exec-test-$$.txt
echo payload >"$work/f.txt"
out=$(kc cp "$work/f.txt" "$pod:$copied" 2>&1) || fail "cp into the pod: $out"
expect_match "cp (tar over exec) then cat" '^payload$' "$(kc exec $pod -- cat "$copied" 2>&1)"
if [ "$(id -u)" = 0 ]; then
  expect_match "exec in the container's UTS namespace" "^$pod\$" "$(kc exec $pod -- cat /proc/sys/kernel/hostname 2>&1)"
  [ -e "$copied" ] && fail "cp wrote the host's $copied, not the container's private /tmp"
fi
if [ "$(id -u)" = 0 ]; then
  out=$(kc exec $pod -- ps -e -o pid=,args= 2>&1)
  expect_match "exec ps: the container's command is PID 1" '^ *1 sh -c trap' "$out"
  [ "$(printf '%s\n' "$out" | wc -l)" -le 4 ] || fail "exec ps shows more than the container's processes: $out"
  kc exec $pod -- kill 1 >/dev/null 2>&1
  restarts() { kc get pod $pod -o jsonpath='{.status.containerStatuses[0].restartCount}' 2>&1; }
  for _ in $(seq 100); do [ "$(restarts)" = 1 ] && break; sleep 0.1; done
  expect_match "exec kill 1 ended the container, which restarted" '^1$' "$(restarts)"
  for _ in $(seq 100); do
    [ "$(kc get pod $pod -o jsonpath='{.status.containerStatuses[0].ready}' 2>/dev/null)" = true ] && break
    sleep 0.1
  done
fi
out=$(kc exec $pod -c nope -- env 2>&1) && fail "exec -c nope succeeded: $out"
expect_match "exec unknown container" 'container nope is not valid for pod execme-master-0' "$out"
out=$(kc exec $pod -- no-such-program 2>&1) && fail "exec no-such-program succeeded: $out"
expect_match "exec missing program" 'executable file not found in \$PATH' "$out"

# port-forward: a plain pod serving HTTP on a free port (in the pod's own network namespace as
# root; on the host's network otherwise).
free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
web_port=$(free_port)
cat >"$work/web.yaml" <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  terminationGracePeriodSeconds: 1
  containers:
    - name: main
      image: python:3.11
      command: [python3, -m, http.server, "$web_port", --bind, 127.0.0.1]
EOF
kc create -f "$work/web.yaml" >/dev/null 2>&1 || fail "create pod web"
for _ in $(seq 100); do
  kc exec web -- python3 -c "import socket; socket.create_connection(('127.0.0.1', $web_port))" >/dev/null 2>&1 && break
  sleep 0.1
done
forward() {  # forward LOG POD_PORT: kubectl port-forward in the background; echoes the local port
  timeout 30 "$K" --kubeconfig "$work/kubeconfig" --cache-dir "$work/cache" port-forward pod/web "0:$2" >"$1" 2>&1 </dev/null &
  echo $! >"$1.pid"
  for _ in $(seq 100); do grep -q '^Forwarding from 127.0.0.1' "$1" && break; sleep 0.1; done
  sed -n 's/^Forwarding from 127.0.0.1:\([0-9]*\) .*/\1/p' "$1" | head -1
}
stop_forward() { kill "$(cat "$1.pid")" 2>/dev/null; wait "$(cat "$1.pid")" 2>/dev/null; }
http_get() { /usr/bin/python3 -c "import urllib.request, sys; print(urllib.request.urlopen('http://127.0.0.1:' + sys.argv[1] + '/', timeout=10).read().decode())" "$1" 2>&1; }
local_port=$(forward "$work/pf.log" "$web_port")
[ -n "$local_port" ] || fail "port-forward did not start: $(cat "$work/pf.log")"
expect_match "port-forward: first connection" 'Directory listing' "$(http_get "$local_port")"
expect_match "port-forward: second connection, same forward" 'Directory listing' "$(http_get "$local_port")"
stop_forward "$work/pf.log"
expect_match "port-forward: handled both" 'Handling connection for' "$(cat "$work/pf.log")"

closed_port=$(free_port)
local_port=$(forward "$work/pf-closed.log" "$closed_port")
http_get "$local_port" >/dev/null
for _ in $(seq 50); do grep -q 'error forwarding port' "$work/pf-closed.log" && break; sleep 0.1; done
stop_forward "$work/pf-closed.log"
expect_match "port-forward to a closed port: the kubelet's error" "error forwarding port $closed_port to pod web, uid .*connection refused" "$(cat "$work/pf-closed.log")"

if [ $failures -gt 0 ]; then
  echo "--- serve log"; tail -20 "$work/serve.log"
  exit 1
fi
echo "PASS: kubectl $minor exec and port-forward"
