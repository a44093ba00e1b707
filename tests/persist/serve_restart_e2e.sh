#!/bin/bash
# A job whose server is SIGKILLed mid-epoch finishes Succeeded after the restart: the seed job
# runs on `pjemu serve --data-dir D`; once rank 0 has saved a checkpoint the server is killed
# with SIGKILL (its trainers die with it), then started again on the same D. The kubelet reports
# the dead containers terminated (ContainerStatusUnknown, 137), OnFailure restarts them, the
# trainer resumes from its checkpoint under D, and the job Succeeds; the log from before the kill
# is still served (--previous).
# Usage: serve_restart_e2e.sh PJEMU
set -uo pipefail
PJEMU=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
serve_pid=
cleanup() {
  [ -n "$serve_pid" ] && kill -TERM "$serve_pid" 2>/dev/null && wait "$serve_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
export HOME=$work/home
mkdir -p "$HOME"
data=$work/data
images=$root/tests/persist/restart-trainer-images.yaml
p() { "$PJEMU" "$@" --kubeconfig "$work/kubeconfig"; }
start_serve() {
  "$PJEMU" serve --port 0 --gpus 0 --kubeconfig "$work/kubeconfig" --data-dir "$data" \
    --image-map "$images" >"$work/serve-$1.log" 2>&1 &
  serve_pid=$!
  for _ in $(seq 200); do grep -q "serving the Kubernetes API" "$work/serve-$1.log" && return 0; sleep 0.1; done
  cat "$work/serve-$1.log"
  echo "FAIL: serve $1 did not start"
  exit 1
}

start_serve 1
p create -f "$root/fixtures/seeds/pytorch-simple.yaml" || { echo "FAIL: create"; exit 1; }
checkpoint=$data/state/work/kubeflow_pytorch-simple-master-0/checkpoints/checkpoint.pt
for _ in $(seq 1200); do [ -f "$checkpoint" ] && break; sleep 0.1; done
[ -f "$checkpoint" ] || { p logs pytorch-simple-master-0 -n kubeflow; echo "FAIL: no checkpoint"; exit 1; }
kill -KILL "$serve_pid"
wait "$serve_pid" 2>/dev/null
serve_pid=
echo "== SIGKILLed the server after the first checkpoint"

start_serve 2
# Polls (not `pjemu wait`, so that this test depends on the server alone).
succeeded=
for _ in $(seq 1200); do
  p get pytorchjob pytorch-simple -n kubeflow -o json 2>/dev/null |
    grep -q '"reason": *"PyTorchJobSucceeded"' && { succeeded=1; break; }
  sleep 0.2
done
if [ -z "$succeeded" ]; then
  p get pytorchjob pytorch-simple -n kubeflow -o yaml | tail -30
  p get pods -n kubeflow -o yaml | tail -60
  echo "FAIL: the job did not succeed after the restart"
  exit 1
fi
failures=0
pod=$(p get pod pytorch-simple-master-0 -n kubeflow -o json)
grep -q '"reason": *"ContainerStatusUnknown"' <<<"$pod" ||
  { echo "FAIL: no ContainerStatusUnknown lastState on the master"; failures=1; }
grep -Eq '"restartCount": *[1-9]' <<<"$pod" || { echo "FAIL: restartCount did not grow"; failures=1; }
log=$(p logs pytorch-simple-master-0 -n kubeflow 2>&1)
grep -q "Resuming from" <<<"$log" || { echo "$log" | head; echo "FAIL: no resume"; failures=1; }
grep -q "accuracy=" <<<"$log" || { echo "FAIL: no accuracy in the final log"; failures=1; }
previous=$(p logs pytorch-simple-master-0 -n kubeflow --previous 2>&1)
grep -q "Train Epoch" <<<"$previous" ||
  { echo "$previous" | head; echo "FAIL: the log from before the kill is gone"; failures=1; }
echo "$log" | grep -E "Resuming|accuracy"
[ $failures = 0 ] && echo "restart e2e: Succeeded after SIGKILL mid-epoch"
exit $failures
