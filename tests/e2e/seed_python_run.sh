#!/bin/bash
# Seed 003's YAML verbatim with fixtures/image-maps/seed-python.yaml: the seed's own, unmodified
# mnist.py runs in both pods (Debian's Python and torch, the dataset at ../data, the tensorboardX
# stand-in) and the job Succeeds. Its two ranks' accuracy lines (each counts its shard of the
# test set over the whole set) add up to the accuracy pjemu-trainer reports for the same YAML
# with the built-in map, within 0.003: the same model, trained by the reference and by pjemu.
# Usage: seed_python_run.sh PJEMU
set -uo pipefail
. "$(dirname "$0")/byoj/needs-sandbox.sh"
PJEMU=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
seed=$root/fixtures/seeds/pytorch-simple.yaml
out=$("$PJEMU" run -f "$seed" --image-map "$root/fixtures/image-maps/seed-python.yaml" \
  --all-logs --timeout 9m 2>&1)
rc=$?
echo "$out" | grep -vE "Train Epoch" | tail -20
[ "$rc" = 0 ] || { echo "FAIL: pjemu run with the seed's mnist.py exited $rc"; exit 1; }
grep -Eq "World Size: 2\. Rank: 1" <<<"$out" || { echo "FAIL: mnist.py did not report rank 1 of 2"; exit 1; }
grep -Eq "kubeflow/pytorch-simple +Succeeded" <<<"$out" || { echo "FAIL: job not Succeeded"; exit 1; }
python_acc=$(grep -oE "accuracy=0\.[0-9]{4}" <<<"$out" | cut -d= -f2 | paste -sd+)
[ "$(grep -cE "accuracy=0\.[0-9]{4}" <<<"$out")" = 2 ] ||
  { echo "FAIL: want one accuracy line per rank"; exit 1; }
out=$("$PJEMU" run -f "$seed" --timeout 9m -o json 2>/dev/null)
trainer_acc=$(/usr/bin/python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["jobs"][0]["accuracy"])' <<<"$out") ||
  { echo "FAIL: no accuracy from pjemu-trainer: $out"; exit 1; }
echo "seed mnist.py: $python_acc = $(/usr/bin/python3 -c "print($python_acc)"); pjemu-trainer: $trainer_acc"
/usr/bin/python3 -c "import sys; sys.exit(0 if abs($python_acc - $trainer_acc) <= 0.003 else 1)" ||
  { echo "FAIL: accuracies differ by more than 0.003"; exit 1; }
echo "seed-python: the seed's own mnist.py Succeeded with pjemu-trainer's accuracy"
