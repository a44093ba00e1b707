#!/bin/bash
# `pjemu scenario compare` against the stand-in cluster (`pjemu serve --token`): each FILE runs on
# both and agrees (exit 0, "agree"; its HTML report says AGREE and shows both timelines), a
# virtual-time file is skipped with its reason, and without a cluster it is one line and exit 2.
# Usage: remote_compare_test.sh PJEMU FILE...   (from the repository root)
set -uo pipefail
PJEMU=$1
shift
. "$(dirname "$0")/../support/serve_kubectl.sh"

start_serve --token "t-$RANDOM" --data-dir "$work/data" --image-map tests/e2e/fast-trainer-images.yaml
grep -q "serving the Kubernetes API on https://" "$work/serve.log" || { cat "$work/serve.log"; exit 1; }

"$PJEMU" scenario compare --kubeconfig "$work/kubeconfig" --output-dir "$work/out" \
  "$@" scenarios/eviction.yaml >"$work/out.txt" 2>&1
rc=$?
cat "$work/out.txt"
[ "$rc" = 0 ] || fail "exit $rc, want 0"
for f in "$@"; do
  report=$work/out/compare-$(basename "$f" .yaml).html
  grep -qx "$f: agree (report $report)" "$work/out.txt" || fail "$f: no agree line"
  grep -q '<p class="verdict pass">AGREE</p>' "$report" || fail "$f: report: no AGREE"
  [ "$(grep -c '<div class="side">' "$report")" = 2 ] || fail "$f: report: not two timelines"
done
grep -qx "scenarios/eviction.yaml: skipped: emulator only: virtual time (options.time: virtual)" \
  "$work/out.txt" || fail "eviction: no skipped line"
"$PJEMU" scenario compare scenarios/oom-real.yaml >"$work/out.txt" 2>&1
rc=$?
[ "$rc" = 2 ] || fail "no cluster: exit $rc, want 2"
[ "$(wc -l <"$work/out.txt")" = 1 ] || fail "no cluster: want one line: $(cat "$work/out.txt")"
[ "$failures" = 0 ] && echo "all passed"
exit $((failures > 0))
