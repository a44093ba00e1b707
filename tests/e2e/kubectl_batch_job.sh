#!/bin/bash
# batch/v1 Job with a real kubectl against `pjemu serve`, as a user meets it: `kubectl create job
# pi --image=busybox -- sh -c 'echo hi'` (busybox maps to the host's sh), `kubectl wait
# --for=condition=complete`, `kubectl get jobs` with kubectl's own columns, `kubectl logs job/pi`
# (resolved through the Job's selector), an Indexed Job's pod names, hostnames and completion
# index, a failing Job's BackoffLimitExceeded, and a bad field refused by name.
# Usage: kubectl_batch_job.sh KUBECTL PJEMU
set -uo pipefail
. "$(dirname "$0")/byoj/needs-sandbox.sh"
K=$1 PJEMU=$2
. "$(dirname "$0")/../support/serve_kubectl.sh"

start_serve

out=$(kc create job pi --image=busybox -- sh -c 'echo hi' 2>&1)
expect_match "create job" "job.batch/pi created" "$out"
out=$(kc wait --for=condition=complete job/pi --timeout=60s 2>&1)
expect_match "wait --for=condition=complete" "job.batch/pi condition met" "$out"
out=$(kc get jobs 2>&1)
expect_match "get jobs: header" "^NAME +(STATUS +)?COMPLETIONS +DURATION +AGE" "$out"
expect_match "get jobs: row" "^pi +(Complete +)?1/1 +[0-9]+s +[0-9]+s" "$out"
out=$(kc logs job/pi 2>&1)
[ "$out" = hi ] || fail "logs job/pi: want 'hi', got '$out'"
out=$(kc get pods -l job-name=pi -o 'jsonpath={.items[*].metadata.name}' 2>&1)
expect_match "pod name <job>-<5>" "^pi-[a-z0-9]{5}$" "$out"

kc create -f - <<'YAML' >/dev/null 2>&1 || fail "create indexed"
apiVersion: batch/v1
kind: Job
metadata: {name: idx}
spec:
  completions: 3
  parallelism: 3
  completionMode: Indexed
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: main
          image: busybox
          command: [sh, -c, 'echo "index=$JOB_COMPLETION_INDEX host=$(hostname)"']
YAML
out=$(kc wait --for=condition=complete job/idx --timeout=60s 2>&1)
expect_match "indexed job completes" "condition met" "$out"
out=$(kc get job idx -o 'jsonpath={.status.completedIndexes} {.status.succeeded}' 2>&1)
[ "$out" = "0-2 3" ] || fail "completedIndexes/succeeded: want '0-2 3', got '$out'"
names=$(kc get pods -l job-name=idx -o 'jsonpath={range .items[*]}{.metadata.name}{"\n"}{end}' 2>&1)
for i in 0 1 2; do
  expect_match "pod of index $i" "^idx-$i-[a-z0-9]{5}$" "$names"
  pod=$(grep "^idx-$i-" <<<"$names")
  out=$(kc logs "$pod" 2>&1)
  [ "$out" = "index=$i host=idx-$i" ] || fail "logs $pod: want 'index=$i host=idx-$i', got '$out'"
done

kc create -f - <<'YAML' >/dev/null 2>&1 || fail "create failing"
apiVersion: batch/v1
kind: Job
metadata: {name: boom}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox, command: [sh, -c, 'exit 3']}]
YAML
out=$(kc wait --for=condition=failed job/boom --timeout=60s 2>&1)
expect_match "failing job fails" "condition met" "$out"
out=$(kc get job boom -o 'jsonpath={range .status.conditions[*]}{.type}={.reason};{end}' 2>&1)
expect_match "failed conditions" "FailureTarget=BackoffLimitExceeded;Failed=BackoffLimitExceeded;" "$out"

out=$(kc create -f - 2>&1 <<'YAML'
apiVersion: batch/v1
kind: Job
metadata: {name: bad}
spec:
  template:
    spec:
      restartPolicy: Always
      containers: [{name: main, image: busybox}]
YAML
)
expect_match "a bad restartPolicy is refused naming the field" \
  'spec.template.spec.restartPolicy: Unsupported value: "Always"' "$out"

[ "$failures" = 0 ] || { tail -30 "$work/serve.log"; exit 1; }
echo "batch/v1 Job: create job, wait, get, logs, Indexed and a failing Job as kube-controller-manager does"
