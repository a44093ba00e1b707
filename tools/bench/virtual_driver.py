"""One run of bench_scale_virtual (tools/bench/scale_virtual.cc), for tools/bench/control-plane
and tools/bench/scale-guard.

The programs ask jemalloc for transparent huge pages (emulator/common/jemalloc_options.cc);
small_pages=True runs the driver on 4 KiB pages instead, through MALLOC_CONF, which overrides
the compiled-in options. The scale guard uses them (at 300 jobs 2 MiB pages add a near-fixed
2-20 MiB of RSS that blurs the memory per pod it guards); the control-plane benchmark uses them
as the peer its huge pages are measured against.
"""
import json
import os
import subprocess
from collections import namedtuple

SMALL_PAGES = "thp:never,metadata_thp:disabled"

# result: the driver's JSON line (a dict) or None; error: why not (None with a result).
Run = namedtuple("Run", "result error")


def run(bindir, jobs, kind=None, small_pages=False, timeout=600, cwd=None):
    """Runs bindir/bench_scale_virtual --jobs N [--kind K] once, in a fresh process. Raises
    subprocess.TimeoutExpired past `timeout` seconds (the process is killed)."""
    env = dict(os.environ)
    if small_pages:
        env["MALLOC_CONF"] = SMALL_PAGES
    argv = [os.path.join(bindir, "bench_scale_virtual"), "--jobs", str(jobs)]
    if kind:
        argv += ["--kind", kind]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env, cwd=cwd)
    lines = out.stdout.strip().splitlines()
    try:
        return Run(json.loads(lines[-1]), None)
    except (IndexError, ValueError):
        return Run(None, "no result (exit %d): %s" % (out.returncode, out.stderr[-400:]))
