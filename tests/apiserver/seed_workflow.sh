#!/bin/bash
# The seed documents' kubectl workflow, run verbatim with one kubectl against a running server,
# asserting on what kubectl prints. Reusable by `pjemu serve` tests: with a real controller and
# kubelet leave SEED_HOOK unset; without them, SEED_HOOK names a program called as
# `$SEED_HOOK created NS NAME` (after create) and `$SEED_HOOK finish NS NAME` (while
# `logs -f` streams) that plays the controller (see fake_controller.py).
# Usage: seed_workflow.sh KUBECTL KUBECONFIG MANIFEST
set -uo pipefail
K=$1 KC=$2 MANIFEST=$3
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$work"' EXIT
export HOME=$work/home
mkdir -p "$HOME"
kc() { "$K" --kubeconfig "$KC" --cache-dir "$work/cache" "$@"; }
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
# expect DESCRIPTION OUTPUT REGEX...: every regex must match a line of OUTPUT.
expect() {
  local desc=$1 out=$2
  shift 2
  for re in "$@"; do
    grep -Eq -- "$re" <<<"$out" || fail "$desc: no line matches /$re/ in:"$'\n'"$out"
  done
  return 0
}
hook() { if [ -n "${SEED_HOOK:-}" ]; then "$SEED_HOOK" "$@" || fail "hook $*"; fi; }
# wait_for FILE REGEX SECONDS
wait_for() {
  for _ in $(seq $(($3 * 10))); do grep -Eq -- "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
  return 1
}

NAME=$(awk '/^metadata:/{m=1;next} m&&/^  name:/{print $2; exit}' "$MANIFEST" | tr -d '"')
NS=$(awk '/^metadata:/{m=1;next} m&&/^  namespace:/{print $2; exit}' "$MANIFEST" | tr -d '"')
NS=${NS:-default}
minor=$(kc version --client -o json 2>/dev/null | sed -n 's/.*"minor": *"\([0-9]*\).*/\1/p' | head -1)
echo "== kubectl 1.$minor, job $NS/$NAME"

out=$(kc create -f "$MANIFEST" 2>&1) || fail "create exit $?"
expect "create" "$out" "^pytorchjob.kubeflow.org/$NAME created$"
out=$(kc create -f "$MANIFEST" 2>&1) && fail "second create succeeded"
expect "create again" "$out" "Error from server \(AlreadyExists\).*pytorchjobs.kubeflow.org \"$NAME\" already exists"
hook created "$NS" "$NAME"

out=$(kc get pytorchjobs -n "$NS" 2>&1) || fail "get exit $?"
expect "get pytorchjobs" "$out" "^NAME +STATE +AGE$" "^$NAME +Running +[0-9]+s$"
out=$(kc get -o yaml pytorchjobs "$NAME" -n "$NS" 2>&1) || fail "get -o yaml exit $?"
expect "get -o yaml" "$out" "^kind: PyTorchJob$" "^  name: $NAME$" "^  pytorchReplicaSpecs:$" "uid: "
out=$(kc get pytorchjob nosuch -n "$NS" 2>&1) && fail "get nosuch succeeded"
expect "get nosuch" "$out" "Error from server \(NotFound\): pytorchjobs.kubeflow.org \"nosuch\" not found"
out=$(kc get pods -l "training.kubeflow.org/job-name=$NAME" -n "$NS" 2>&1) || fail "get pods exit $?"
expect "get pods -l" "$out" "^NAME +READY +STATUS +RESTARTS +AGE$" "^$NAME-master-0 +1/1 +Running +0 +[0-9]+s$" \
  "^$NAME-worker-0 +1/1 +Running +0 +[0-9]+s$"
out=$(kc get pods -o wide -n "$NS" 2>&1) || fail "get pods -o wide exit $?"
expect "get pods -o wide" "$out" "IP +NODE +NOMINATED NODE +READINESS GATES" "^$NAME-master-0 .* 10\.244\.0\.10 +pjemu-node-0 +<none> +<none>$"

kc logs -f "$NAME-master-0" -n "$NS" >"$work/logs" 2>&1 &
logs_pid=$!
wait_for "$work/logs" "Train Epoch" 20 || fail "logs -f printed nothing: $(cat "$work/logs")"
hook finish "$NS" "$NAME"
for _ in $(seq 600); do kill -0 $logs_pid 2>/dev/null || break; sleep 0.1; done
if kill -0 $logs_pid 2>/dev/null; then fail "logs -f did not end when the pod completed"; kill $logs_pid; fi
wait $logs_pid || fail "logs -f exit $?"
expect "logs -f" "$(cat "$work/logs")" "^Using distributed PyTorch" "Train Epoch: 1 \[6400/60000" "^accuracy="

out=$(kc wait --for=condition=Succeeded "pytorchjob/$NAME" -n "$NS" --timeout=60s 2>&1) || fail "wait exit $?"
expect "wait" "$out" "^pytorchjob.kubeflow.org/$NAME condition met$"
out=$(kc get pods -l "training.kubeflow.org/job-name=$NAME" -n "$NS" 2>&1)
expect "get pods after completion" "$out" "^$NAME-master-0 +0/1 +Completed +0 "
out=$(kc describe pytorchjob "$NAME" -n "$NS" 2>&1) || fail "describe exit $?"
expect "describe" "$out" "^Name: +$NAME$" "^Events:" "SuccessfulCreatePod +[0-9a-z]+ +pytorchjob-controller +Created pod: $NAME-master-0" \
  "PyTorchJobSucceeded"

kc get pytorchjobs -n "$NS" -w >"$work/watch" 2>&1 &
watch_pid=$!
wait_for "$work/watch" "^$NAME +Succeeded" 20 || fail "get -w printed no row"
out=$(kc label pytorchjob "$NAME" -n "$NS" seen=yes 2>&1) || fail "label exit $?"
expect "label" "$out" "pytorchjob.kubeflow.org/$NAME labeled"
wait_for "$work/watch" "^$NAME +Succeeded.*" 20
for _ in $(seq 100); do [ "$(grep -Ec "^$NAME +Succeeded" "$work/watch")" -ge 2 ] && break; sleep 0.1; done
[ "$(grep -Ec "^$NAME +Succeeded" "$work/watch")" -eq 2 ] || fail "get -w: want the listed row and one change:"$'\n'"$(cat "$work/watch")"
[ "$(grep -c '^NAME' "$work/watch")" -eq 1 ] || fail "get -w printed the header more than once"
kill $watch_pid; wait $watch_pid 2>/dev/null

out=$(kc apply -f "$MANIFEST" 2>&1) || fail "apply exit $?"
expect "first apply" "$out" "^pytorchjob.kubeflow.org/$NAME configured$" "missing the kubectl.kubernetes.io/last-applied-configuration annotation"
out=$(kc apply -f "$MANIFEST" 2>&1) || fail "second apply exit $?"
expect "second apply" "$out" "^pytorchjob.kubeflow.org/$NAME unchanged$"

out=$(kc delete -f "$MANIFEST" 2>&1) || fail "delete exit $?"
expect "delete" "$out" "^pytorchjob.kubeflow.org \"$NAME\" deleted$"
out=$(kc get pods -l "training.kubeflow.org/job-name=$NAME" -n "$NS" 2>&1)
expect "pods gone" "$out" "^No resources found in $NS namespace.$"
out=$(kc get services -n "$NS" 2>&1)
expect "services gone" "$out" "^No resources found in $NS namespace.$"
out=$(kc delete -f "$MANIFEST" 2>&1) && fail "second delete succeeded"
expect "delete again" "$out" "Error from server \(NotFound\).*pytorchjobs.kubeflow.org \"$NAME\" not found"

if [ "$failures" -ne 0 ]; then echo "seed workflow: $failures failure(s)" >&2; exit 1; fi
echo "seed workflow passed with kubectl 1.$minor"
