#!/bin/bash
# Client test: pods/exec and pods/portforward through one kubectl against `pjemu serve` over
# HTTPS. A PyTorchJob's master (busybox sleeping, env FOO=bar) runs. kubectl 1.30 and newer
# exec over WebSocket (v5.channel.k8s.io): `exec -- env` shows the container's environment
# (the operator's MASTER_ADDR and RANK, FOO); `exec -i -- sh -c 'cat; exit 3'` gets stdin and
# exits 3; `kubectl cp` (tar over exec) puts a file in the container; as root (the sandbox)
# the command sees the container's UTS namespace (hostname = the pod's name) and the file is in
# the container's private /tmp, not the host's; an unknown container and a missing program are refused
# with the real messages. Older kubectls speak SPDY and get one clear line naming what is
# served. kubectl port-forward (SPDY framing) fails with one clear line in every version.
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
              command: [sleep, "600"]
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

if [ "${minor:-0}" -ge 30 ]; then
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
  out=$(kc exec $pod -c nope -- env 2>&1) && fail "exec -c nope succeeded: $out"
  expect_match "exec unknown container" 'container nope is not valid for pod execme-master-0' "$out"
  out=$(kc exec $pod -- no-such-program 2>&1) && fail "exec no-such-program succeeded: $out"
  expect_match "exec missing program" 'executable file not found in \$PATH' "$out"
else
  out=$(kc exec $pod -- env 2>&1) && fail "exec over SPDY succeeded: $out"
  expect_match "exec over SPDY refused" 'pjemu serves exec and attach over WebSocket \(v5.channel.k8s.io' "$out"
  expect_match "exec over SPDY names kubectl 1.30" 'kubectl 1.30 or newer speaks it' "$out"
  [ "$(grep -c . <<<"$out")" = 1 ] || fail "exec over SPDY: one line expected: $out"
fi

out=$(timeout 20 "$K" --kubeconfig "$work/kubeconfig" --cache-dir "$work/cache" port-forward "pod/$pod" 0:8080 2>&1 </dev/null)
rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "port-forward: rc $rc: $out"
expect_match "port-forward refused" 'pjemu serves port-forward over WebSocket.*kubectl port-forward needs SPDY' "$out"

if [ $failures -gt 0 ]; then
  echo "--- serve log"; tail -20 "$work/serve.log"
  exit 1
fi
echo "PASS: kubectl $minor exec and port-forward"
