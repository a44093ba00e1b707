#!/bin/bash
# Client test: server-side apply through one kubectl against pjemu-apiserver-testd, the issue's four
# steps for a ConfigMap, a Pod, a Service and a PyTorchJob: alice applies; bob's apply of a field
# alice set is refused (409, kube-apiserver's message) until he forces it; alice's re-apply
# without a field she alone owned removes it; `get -o yaml --show-managed-fields` shows the
# managedFields (kubectl 1.20 always shows them). Then `kubectl diff` and `diff --server-side`
# of a changed replica count, and `apply --server-side` after client-side apply (kubectl 1.26+
# migrates the client-side manager, so the dropped key goes; 1.20 keeps it, as on a cluster).
# Usage: kubectl_apply_test.sh KUBECTL TESTD
set -uo pipefail
K=$1 TESTD=$2
if [ ! -x "$K" ]; then echo "SKIP: $K is not present"; exit 0; fi
work=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; }; rm -rf "$work"; }
trap cleanup EXIT
export HOME=$work/home
mkdir -p "$HOME"
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

"$TESTD" --kubeconfig "$work/kubeconfig" >"$work/serve.out" 2>&1 &
pid=$!
for _ in $(seq 200); do grep -q '^PORT ' "$work/serve.out" 2>/dev/null && break; sleep 0.05; done
grep -q '^PORT ' "$work/serve.out" || { echo "server did not start: $(cat "$work/serve.out")"; exit 1; }
kc() { "$K" --kubeconfig "$work/kubeconfig" --cache-dir "$work/cache" "$@"; }
minor=$(kc version --client -o json 2>/dev/null | sed -n 's/.*"minor": *"\([0-9]*\).*/\1/p' | head -1)
expect() {  # expect WHAT PATTERN OUTPUT
  grep -Eq -- "$2" <<<"$3" || fail "$1: expected /$2/ in: $3"
}
reject() {  # reject WHAT PATTERN OUTPUT
  grep -Eq -- "$2" <<<"$3" && fail "$1: did not expect /$2/ in: $3"
}
ssa() {  # ssa MANAGER FILE [args]: apply --server-side from stdin-free files
  local m=$1 f=$2; shift 2
  kc apply --server-side --field-manager="$m" -f "$f" "$@" 2>&1
}
managed() { kc get "$1" -o yaml --show-managed-fields 2>/dev/null || kc get "$1" -o yaml; }

# --- ConfigMap: the issue's steps verbatim -------------------------------------------------
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: shared}\ndata: {a: "1", b: "2"}\n' >"$work/cm-alice.yaml"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: shared}\ndata: {a: "9"}\n' >"$work/cm-bob.yaml"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: shared}\ndata: {a: "1"}\n' >"$work/cm-alice2.yaml"
expect "cm: alice applies" '^configmap/shared serverside-applied$' "$(ssa alice "$work/cm-alice.yaml")"
out=$(ssa bob "$work/cm-bob.yaml")
expect "cm: bob conflicts" 'Apply failed with 1 conflict: conflict with "alice": \.data\.a' "$out"
[ "$(kc get cm shared -o jsonpath='{.data.a}')" = 1 ] || fail "cm: the conflict changed data.a"
expect "cm: alice drops b" '^configmap/shared serverside-applied$' "$(ssa alice "$work/cm-alice2.yaml")"
[ "$(kc get cm shared -o jsonpath='{.data}')" = '{"a":"1"}' ] || fail "cm: b not removed: $(kc get cm shared -o yaml)"
out=$(managed cm/shared)
expect "cm: managedFields" 'manager: alice' "$out"
expect "cm: operation Apply" 'operation: Apply' "$out"
expect "cm: fieldsV1" 'f:a: \{\}' "$out"
if [ "${minor:-0}" -ge 21 ]; then
  reject "cm: hidden without --show-managed-fields" 'managedFields' "$(kc get cm shared -o yaml)"
fi
expect "cm: bob forces" 'serverside-applied' "$(ssa bob "$work/cm-bob.yaml" --force-conflicts)"
[ "$(kc get cm shared -o jsonpath='{.data.a}')" = 9 ] || fail "cm: force did not take data.a"
expect "cm: alice now conflicts with bob" 'conflict with "bob": \.data\.a' "$(ssa alice "$work/cm-alice2.yaml")"

# --- Pod: containers by name ---------------------------------------------------------------
pod() {  # pod IMAGE LABELS
  printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: web, labels: {%s}}\nspec:\n  containers:\n  - {name: main, image: %s, command: [sleep, "3600"]}\n' "$2" "$1"
}
pod busybox 'a: "1", b: "2"' >"$work/pod-alice.yaml"
pod busybox:1.36 'a: "1"' >"$work/pod-bob.yaml"
pod busybox 'a: "1"' >"$work/pod-alice2.yaml"
expect "pod: alice applies" '^pod/web serverside-applied$' "$(ssa alice "$work/pod-alice.yaml")"
out=$(ssa bob "$work/pod-bob.yaml")
expect "pod: bob conflicts on the container's image" 'conflict with "alice": \.spec\.containers\[name="main"\]\.image' "$out"
expect "pod: alice drops label b" 'serverside-applied' "$(ssa alice "$work/pod-alice2.yaml")"
[ "$(kc get pod web -o jsonpath='{.metadata.labels}')" = '{"a":"1"}' ] || fail "pod: label b not removed: $(kc get pod web -o yaml)"
expect "pod: keyed container in fieldsV1" 'k:\{"name":"main"\}' "$(managed pod/web)"

# --- Service: ports by port+protocol -------------------------------------------------------
svc() {  # svc PORTS
  printf 'apiVersion: v1\nkind: Service\nmetadata: {name: api}\nspec:\n  selector: {app: api}\n  ports:\n%s' "$1"
}
svc '  - {name: http, port: 80, targetPort: 8080}
  - {name: https, port: 443, targetPort: 8443}
' >"$work/svc-alice.yaml"
svc '  - {name: http, port: 80, targetPort: 9090}
' >"$work/svc-bob.yaml"
svc '  - {name: http, port: 80, targetPort: 8080}
' >"$work/svc-alice2.yaml"
expect "svc: alice applies" '^service/api serverside-applied$' "$(ssa alice "$work/svc-alice.yaml")"
out=$(ssa bob "$work/svc-bob.yaml")
expect "svc: bob conflicts" 'conflict with "alice": \.spec\.ports\[port=80,protocol="TCP"\]\.targetPort' "$out"
expect "svc: alice drops 443" 'serverside-applied' "$(ssa alice "$work/svc-alice2.yaml")"
[ "$(kc get svc api -o jsonpath='{.spec.ports[*].port}')" = 80 ] || fail "svc: port 443 not removed: $(kc get svc api -o yaml)"
expect "svc: keyed port in fieldsV1" 'k:\{"port":80,"protocol":"TCP"\}' "$(managed svc/api)"

# --- PyTorchJob: replica specs map, env by name; kubectl diff --------------------------------
job() {  # job WORKERS ENV
  cat <<YAML
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: mnist}
spec:
  runPolicy: {suspend: true}
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers:
          - name: pytorch
            image: docker.io/kubeflowkatib/pytorch-mnist:v1beta1-45c5727
            env: [$2]
    Worker:
      replicas: $1
      template:
        spec:
          containers:
          - name: pytorch
            image: docker.io/kubeflowkatib/pytorch-mnist:v1beta1-45c5727
YAML
}
job 2 '{name: A, value: "1"}, {name: B, value: "2"}' >"$work/job-alice.yaml"
job 3 '{name: A, value: "1"}, {name: B, value: "2"}' >"$work/job-bob.yaml"
job 2 '{name: A, value: "1"}' >"$work/job-alice2.yaml"
expect "job: alice applies" '^pytorchjob.kubeflow.org/mnist serverside-applied$' "$(ssa alice "$work/job-alice.yaml")"
# kubectl 1.20 checks dry-run support in the OpenAPI v2 document first, where pjemu does not
# list the PyTorchJob's PATCH parameters ("doesn't support dry-run"; README deviation), so the
# diffs run from 1.21 on.
if [ "${minor:-0}" -ge 21 ]; then
  out=$(kc diff --server-side --field-manager=alice -f "$work/job-bob.yaml" 2>&1)
  if grep -q 'unknown flag' <<<"$out"; then  # an old kubectl: take the fields in the dry run
    out=$(kc diff --server-side --force-conflicts -f "$work/job-bob.yaml" 2>&1)
  fi
  expect "job: diff --server-side shows the replicas" '^\+ +replicas: 3' "$out"
  expect "job: diff --server-side shows the old replicas" '^- +replicas: 2' "$out"
  out=$(kc diff -f "$work/job-bob.yaml" 2>&1)
  expect "job: diff shows the replicas" '^\+ +replicas: 3' "$out"
  [ "$(kc get pytorchjob mnist -o jsonpath='{.spec.pytorchReplicaSpecs.Worker.replicas}')" = 2 ] || fail "job: diff changed the job"
fi
out=$(ssa bob "$work/job-bob.yaml")
expect "job: bob conflicts" 'conflict with "alice": \.spec\.pytorchReplicaSpecs\.Worker\.replicas' "$out"
expect "job: alice drops env B" 'serverside-applied' "$(ssa alice "$work/job-alice2.yaml")"
[ "$(kc get pytorchjob mnist -o jsonpath='{.spec.pytorchReplicaSpecs.Master.template.spec.containers[0].env[*].name}')" = A ] \
  || fail "job: env B not removed: $(kc get pytorchjob mnist -o yaml)"
out=$(managed pytorchjob/mnist)
expect "job: replica spec in fieldsV1" 'f:Worker:' "$out"
expect "job: env by name in fieldsV1" 'k:\{"name":"A"\}' "$out"

# --- client-side apply, then server-side apply ---------------------------------------------
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: csa}\ndata: {a: "1", b: "2"}\n' >"$work/csa.yaml"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: csa}\ndata: {a: "1"}\n' >"$work/csa2.yaml"
expect "csa: client-side apply" '^configmap/csa created$' "$(kc apply -f "$work/csa.yaml" 2>&1)"
expect "csa: manager" 'manager: kubectl-client-side-apply' "$(managed cm/csa)"
expect "csa: then server-side" 'serverside-applied' "$(kc apply --server-side -f "$work/csa2.yaml" 2>&1)"
data=$(kc get cm csa -o jsonpath='{.data}')
if [ "${minor:-0}" -ge 26 ]; then
  [ "$data" = '{"a":"1"}' ] || fail "csa: kubectl 1.$minor migrates, so b goes: $data"
  reject "csa: no client-side manager left" 'kubectl-client-side-apply' "$(managed cm/csa)"
else
  [ "$data" = '{"a":"1","b":"2"}' ] || fail "csa: kubectl 1.$minor does not migrate, b stays: $data"
fi

if [ "$failures" -gt 0 ]; then
  echo "$failures failure(s); server log:"; tail -20 "$work/serve.out"; exit 1
fi
echo "PASS: kubectl 1.${minor:-?} server-side apply"
