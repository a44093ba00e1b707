#!/bin/bash
# Client test: PodDisruptionBudgets, the pods/eviction subresource, cordon, drain and uncordon
# through one kubectl against `pjemu serve` over HTTPS (the kubeconfig carries the CA): a
# PyTorchJob (Master 1 + Worker 1, sleeping busybox) runs; a policy/v1 budget with
# minAvailable 2 shows ALLOWED DISRUPTIONS 0 and `kubectl drain --ignore-daemonsets` cordons the
# node and is refused (429, the retry message) until its --timeout; with minAvailable 1 one raw
# Eviction passes and the next is refused with 429; without the budget drain evicts both pods
# (their owner is the PyTorchJob: a controller, so no --force); uncordon lets the job's
# re-created pods run again.
# Usage: kubectl_drain_test.sh KUBECTL PJEMU
set -uo pipefail
K=$1 PJEMU=$2
if [ ! -x "$K" ]; then echo "SKIP: $K is not present"; exit 0; fi
. "$(dirname "$0")/../support/serve_kubectl.sh"

start_serve
grep -q 'server: "https://127.0.0.1:' "$work/kubeconfig" || fail "kubeconfig: not https: $(cat "$work/kubeconfig")"
grep -q 'certificate-authority-data: ' "$work/kubeconfig" || fail "kubeconfig: no CA"
grep -q 'insecure-skip-tls-verify' "$work/kubeconfig" && fail "kubeconfig: skips TLS verification"
# A user with no credentials at all makes kubectl prompt for a password over https.
grep -q 'client-certificate-data: ' "$work/kubeconfig" || fail "kubeconfig: no client certificate"
node=pjemu-node
sel=training.kubeflow.org/job-name=drainme

cat >"$work/job.yaml" <<'EOF'
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: drainme
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      restartPolicy: OnFailure
      template:
        spec:
          terminationGracePeriodSeconds: 5
          containers:
            - name: pytorch
              image: busybox
              command: [sleep, "600"]
    Worker:
      replicas: 1
      restartPolicy: OnFailure
      template:
        spec:
          terminationGracePeriodSeconds: 5
          containers:
            - name: pytorch
              image: busybox
              command: [sleep, "600"]
EOF
pdb() {  # pdb MIN_AVAILABLE: the budget's manifest
  printf 'apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: drainme\nspec:\n  minAvailable: %s\n  selector:\n    matchLabels:\n      training.kubeflow.org/job-name: drainme\n' "$1"
}
ready_pods() {  # the number of the job's Ready pods on the node
  kc get pods -l "$sel" --field-selector "spec.nodeName=$node" \
    -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' 2>/dev/null |
    grep -c True
}
wait_ready() {  # wait_ready N
  for _ in $(seq 300); do [ "$(ready_pods)" = "$1" ] && return 0; sleep 0.1; done
  fail "want $1 Ready pods, have $(ready_pods): $(kc get pods -o wide 2>&1)"
}
evict() {  # evict POD: a policy/v1 Eviction through the subresource
  printf '{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"%s","namespace":"default"}}' "$1" >"$work/eviction.json"
  kc create --raw "/api/v1/namespaces/default/pods/$1/eviction" -f "$work/eviction.json" 2>&1
}

expect_match "create job" 'pytorchjob.kubeflow.org/drainme created' "$(kc create -f "$work/job.yaml" 2>&1)"
wait_ready 2
expect_match "create pdb" 'poddisruptionbudget.policy/drainme created' "$(pdb 2 | kc create -f - 2>&1)"
expect_match "get pdb" '^NAME +MIN AVAILABLE +MAX UNAVAILABLE +ALLOWED DISRUPTIONS +AGE' "$(kc get pdb 2>&1)"
expect_match "get pdb row" '^drainme +2 +N/A +0 +[0-9]+s' "$(kc get pdb 2>&1)"
expect_match "pdb status" '^2 2 2 0$' "$(kc get pdb drainme -o jsonpath='{.status.currentHealthy} {.status.desiredHealthy} {.status.expectedPods} {.status.disruptionsAllowed}' 2>&1)"

# drain: cordons, then every eviction is refused (429) until the timeout.
out=$(kc drain "$node" --ignore-daemonsets --timeout=4s 2>&1) && fail "drain passed a budget that allows nothing: $out"
expect_match "drain cordons" "node/$node cordoned" "$out"
expect_match "drain refused" "Cannot evict pod as it would violate the pod's disruption budget" "$out"
expect_match "drain retries" 'will retry after 5s' "$out"
expect_match "node cordoned" "^$node +Ready,SchedulingDisabled" "$(kc get nodes 2>&1 | tail -n +2)"
[ "$(ready_pods)" = 2 ] || fail "drain refused but pods went: $(kc get pods 2>&1)"

# minAvailable 1: one disruption allowed; the second eviction is refused.
expect_match "patch pdb" 'poddisruptionbudget.policy/drainme patched' \
  "$(kc patch pdb drainme --type=merge -p '{"spec":{"minAvailable":1}}' 2>&1)"
expect_match "pdb allows one" '^drainme +1 +N/A +1 ' "$(kc get pdb --no-headers 2>&1)"
expect_match "evict worker" '"status": ?"Success"' "$(evict drainme-worker-0)"
out=$(evict drainme-master-0)
expect_match "evict master refused" 'TooManyRequests|Too Many Requests|429' "$out"
expect_match "pdb allows none" '^drainme +1 +N/A +0 ' "$(kc get pdb --no-headers 2>&1)"

# Without the budget drain evicts what is left, then uncordon lets the job run again.
kc delete pdb drainme >/dev/null 2>&1 || fail "delete pdb"
out=$(kc drain "$node" --ignore-daemonsets --timeout=60s 2>&1) || fail "drain: $out"
expect_match "drain evicts" 'pod/drainme-master-0 evicted' "$out"
[ "$(ready_pods)" = 0 ] || fail "pods left on the drained node: $(kc get pods -o wide 2>&1)"
expect_match "uncordon" "node/$node uncordoned" "$(kc uncordon "$node" 2>&1)"
expect_match "node schedulable" "^$node +Ready +" "$(kc get nodes 2>&1 | tail -n +2)"
wait_ready 2

echo "kubectl drain test: $failures failure(s)"
[ "$failures" = 0 ] || { tail -20 "$work/serve.log"; exit 1; }
