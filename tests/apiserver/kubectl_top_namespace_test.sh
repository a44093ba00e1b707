#!/bin/bash
# Client test: metrics.k8s.io, service accounts and namespace lifecycle through one kubectl
# against `pjemu serve`: `kubectl top pod` / `top pod --containers` / `top node` showing a
# process that burns a core, the raw PodMetrics as metrics-server writes it, the `default`
# ServiceAccount of a new namespace (`get sa`), and `delete ns` waiting through Terminating
# (phase and conditions shown, creates refused with the API server's 403) until it is gone.
# Usage: kubectl_top_namespace_test.sh KUBECTL PJEMU
set -uo pipefail
K=$1 PJEMU=$2
if [ ! -x "$K" ]; then echo "SKIP: $K is not present"; exit 0; fi
. "$(dirname "$0")/../support/serve_kubectl.sh"
start_serve --output-dir "$work/state"
retry() {  # retry SECONDS CMD...: until CMD succeeds
  local end=$((SECONDS + $1)); shift
  until "$@" >/dev/null 2>&1; do [ $SECONDS -ge $end ] && return 1; sleep 0.5; done
}

cat >"$work/burner.yaml" <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: burner, labels: {app: burner}}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: spin
    image: busybox
    command: [sh, -c, 'while :; do :; done']  # in the container's process group (not timeout's)
YAML
kc create -f "$work/burner.yaml" >/dev/null || fail "create burner"
retry 30 sh -c "'$K' --kubeconfig '$work/kubeconfig' get pod burner -o jsonpath='{.status.phase}' | grep -q Running" \
  || fail "burner Running: $(kc get pod burner 2>&1)"

# metrics-server needs a window: the sampler has one after two samples (a second apart).
retry 20 kc top pod burner || fail "top pod: $(kc top pod burner 2>&1)"
out=$(kc top pod burner 2>&1)
expect_match "top pod header" '^NAME +CPU\(cores\) +MEMORY\(bytes\) *$' "$out"
expect_match "top pod row" '^burner +[0-9]+m +[0-9]+Mi *$' "$out"
cpu=$(sed -n 's/^burner *\([0-9]*\)m.*/\1/p' <<<"$out")
[ "${cpu:-0}" -ge 300 ] || fail "a spinning process uses a core's share, got ${cpu}m: $out"
expect_match "top pod -l" '^burner ' "$(kc top pod -l app=burner 2>&1)"
expect_match "top pod --containers" '^burner +spin +[0-9]+m +[0-9]+Mi *$' "$(kc top pod burner --containers 2>&1)"
retry 10 kc top node || fail "top node: $(kc top node 2>&1)"
expect_match "top node" '^pjemu-node +[0-9]+m +[0-9]+% +[0-9]+Mi +[0-9]+% *$' "$(kc top node 2>&1)"
raw=$(kc get --raw /apis/metrics.k8s.io/v1beta1/namespaces/default/pods/burner 2>&1)
expect_match "raw PodMetrics" '"kind":"PodMetrics"' "$raw"
expect_match "raw apiVersion" '"apiVersion":"metrics.k8s.io/v1beta1"' "$raw"
expect_match "raw window" '"window":"[0-9.]+s"' "$raw"
expect_match "raw usage" '"usage":\{"cpu":"[0-9]+(n|u|m)?","memory":"[0-9]+(Ki|Mi)?"\}' "$raw"
expect_match "not running" 'podmetrics.metrics.k8s.io "default/nope" not found' \
  "$(kc get --raw /apis/metrics.k8s.io/v1beta1/namespaces/default/pods/nope 2>&1)"

# A new namespace: its default ServiceAccount, then deletion through Terminating.
kc create namespace team >/dev/null || fail "create namespace"
retry 10 kc get sa default -n team || fail "default SA: $(kc get sa -n team 2>&1)"
expect_match "get sa" '^default +0 +[0-9]+s$' "$(kc get sa -n team 2>&1)"
cat >"$work/slow.yaml" <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: slow, namespace: team}
spec:
  # Long enough for the three checks below on a loaded machine (kubectl 1.20 takes seconds a
  # call there): the namespace stays Terminating until the pod is gone.
  terminationGracePeriodSeconds: 10
  containers:
  - name: main
    image: busybox
    command: [sh, -c, 'trap "" TERM; sleep 600 & wait; sleep 600']
YAML
kc create -f "$work/slow.yaml" >/dev/null || fail "create slow"
retry 30 sh -c "'$K' --kubeconfig '$work/kubeconfig' get pod slow -n team -o jsonpath='{.status.phase}' | grep -q Running" \
  || fail "slow Running: $(kc get pod slow -n team 2>&1)"
kc delete namespace team --wait=false >/dev/null 2>&1 || fail "delete namespace"
expect_match "Terminating" '^team +Terminating +[0-9]+s$' "$(kc get ns team 2>&1)"
expect_match "forbidden" 'forbidden: unable to create new content in namespace team because it is being terminated' \
  "$(kc create configmap late -n team --from-literal=a=b 2>&1)"
retry 5 sh -c "'$K' --kubeconfig '$work/kubeconfig' get ns team -o jsonpath='{.status.conditions[*].type}' | grep -q NamespaceContentRemaining" \
  || fail "conditions: $(kc get ns team -o yaml 2>&1)"
start=$SECONDS
out=$(kc delete namespace team --timeout=60s 2>&1)
expect_match "delete waits" 'namespace "team" deleted|NotFound' "$out"
expect_match "gone" 'NotFound|not found' "$(kc get ns team 2>&1)"
echo "namespace team went $((SECONDS - start))s after the second delete"

if [ "$failures" -ne 0 ]; then echo "--- serve output"; tail -30 "$work/serve.log"; fi
echo "kubectl top/namespace test ($K): $failures failure(s)"
[ "$failures" -eq 0 ]
