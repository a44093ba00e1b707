#!/bin/bash
# Client test: starts pjemu-apiserver-testd, runs seed_workflow.sh with one kubectl (the fake
# controller plays the operator and kubelet), then the checks outside the seed list: strict
# field validation, `version`, `get --raw /healthz`, and a bearer token over https.
# Usage: kubectl_workflow_test.sh KUBECTL TESTD
set -uo pipefail
K=$1 TESTD=$2
here=$(cd "$(dirname "$0")" && pwd)
if [ ! -x "$K" ]; then echo "SKIP: $K is not present"; exit 0; fi
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; rm -rf "$work"; }
trap cleanup EXIT
export HOME=$work/home
mkdir -p "$HOME"
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

start_server() {  # start_server NAME ARGS... -> sets port
  "$TESTD" --kubeconfig "$work/$1.kubeconfig" "${@:2}" >"$work/$1.out" 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do grep -q '^PORT ' "$work/$1.out" 2>/dev/null && break; sleep 0.05; done
  port=$(sed -n 's/^PORT //p' "$work/$1.out")
  [ -n "$port" ] || { echo "server did not start: $(cat "$work/$1.out")"; exit 1; }
}

manifest=$here/data/pytorch-simple.yaml
[ -f "$PWD/fixtures/seeds/pytorch-simple.yaml" ] && manifest=$PWD/fixtures/seeds/pytorch-simple.yaml
start_server plain --log-file "$here/data/master.log"
printf '#!/bin/sh\nexec /usr/bin/python3 %s http://127.0.0.1:%s "$@"\n' "$here/fake_controller.py" "$port" >"$work/hook"
chmod +x "$work/hook"
SEED_HOOK=$work/hook "$here/seed_workflow.sh" "$K" "$work/plain.kubeconfig" "$manifest" || fail "seed workflow"

kc() { "$K" --kubeconfig "$work/plain.kubeconfig" --cache-dir "$work/cache" "$@"; }
minor=$(kc version --client -o json 2>/dev/null | sed -n 's/.*"minor": *"\([0-9]*\).*/\1/p' | head -1)
sed 's/^  pytorchReplicaSpecs:/  pytorchReplicaSpec:/' "$manifest" >"$work/typo.yaml"
out=$(kc create -f "$work/typo.yaml" 2>&1)
rc=$?
if [ "$minor" -ge 27 ]; then
  [ $rc -ne 0 ] || fail "strict: create of a typo succeeded"
  grep -q 'Error from server (BadRequest): error when creating ".*typo.yaml": PyTorchJob in version "v1" cannot be handled as a PyTorchJob: strict decoding error: unknown field "spec.pytorchReplicaSpec"' <<<"$out" \
    || fail "strict: unexpected output: $out"
else
  grep -q 'Warning: unknown field "spec.pytorchReplicaSpec"' <<<"$out" || fail "warn: unexpected output: $out"
fi
out=$(kc version 2>&1)
grep -q 'v1.30.0' <<<"$out" || fail "version: $out"
out=$(kc get --raw /healthz 2>&1)
[ "$out" = "ok" ] || fail "healthz: $out"

start_server secure --token s3cret
out=$("$K" --kubeconfig "$work/secure.kubeconfig" --cache-dir "$work/cache2" get pods -n default 2>&1)
grep -q '^No resources found in default namespace.$' <<<"$out" || fail "token over https: $out"
sed 's/token: .*/token: "wrong"/' "$work/secure.kubeconfig" >"$work/wrong.kubeconfig"
out=$("$K" --kubeconfig "$work/wrong.kubeconfig" --cache-dir "$work/cache3" get pods -n default 2>&1)
grep -q '^error: You must be logged in to the server (' <<<"$out" || fail "wrong token: $out"

if [ "$failures" -ne 0 ]; then echo "kubectl 1.$minor: $failures failure(s)" >&2; exit 1; fi
echo "kubectl 1.$minor: all client checks passed"
