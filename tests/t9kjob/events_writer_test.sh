#!/bin/bash
# The tutorial fixture's own TensorBoard writer (fixtures/t9k/ddp/torch_mnist_trainingjob.py,
# EventsWriter) writes events files that the independent reader (tests/trainer/
# tensorboard_reader.py: Debian's protobuf and crc32c) reads back record for record, with the
# tags, steps and values written. Exits 77 without Debian's torch (the script imports it).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
/usr/bin/python3 -c 'import torch, torchvision, crc32c' 2>/dev/null || { echo "SKIP: no Debian torch"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 - "$root/fixtures/t9k/ddp/torch_mnist_trainingjob.py" "$work/log" <<'PY' || exit 1
import importlib.util, sys
spec = importlib.util.spec_from_file_location("script", sys.argv[1])
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
w = m.EventsWriter(sys.argv[2])
w.add_scalar("train/loss", 1.5, 10)
w.add_scalar("val/accuracy", 0.75, 0)
w.add_scalar("test/accuracy", 0.8125, 300)
w.close()
PY
out=$(/usr/bin/python3 "$root/tests/trainer/tensorboard_reader.py" "$work/log") || { echo "FAIL: $out"; exit 1; }
got=$(/usr/bin/python3 -c '
import json, sys
for line in sys.stdin:
    r = json.loads(line)
    print(r.get("tag", r.get("file_version")), r["step"], r.get("value", ""))' <<<"$out")
want=$'brain.Event:2 0 \ntrain/loss 10 1.5\nval/accuracy 0 0.75\ntest/accuracy 300 0.8125'
[ "$got" = "$want" ] || { echo "FAIL: read back"$'\n'"$got"$'\n'"want"$'\n'"$want"; exit 1; }
echo "the tutorial script's events file reads back: 3 scalars"
