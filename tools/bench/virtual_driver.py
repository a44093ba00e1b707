"""One run of bench_scale_virtual (tools/bench/scale_virtual.cc), for tools/bench/control-plane
and tools/bench/scale-guard.

The programs ask jemalloc for 4 KiB pages (emulator/common/jemalloc_options.cc says why).
`pages` names them through MALLOC_CONF, which overrides the compiled-in options: SMALL_PAGES
pins the scale guard to 4 KiB pages whatever a build compiles in (at 300 jobs 2 MiB pages add a
near-fixed 2-20 MiB of RSS that blurs the memory per pod it guards); HUGE_PAGES is the peer the
control-plane benchmark measures the programs' own pages against.
"""
import json
import os
import subprocess
from collections import namedtuple

SMALL_PAGES = "thp:never,metadata_thp:disabled"
HUGE_PAGES = "thp:always,metadata_thp:always"

# result: the driver's JSON line (a dict) or None; error: why not (None with a result).
Run = namedtuple("Run", "result error")


def run(bindir, jobs, kind=None, pages=None, timeout=600, cwd=None):
    """Runs bindir/bench_scale_virtual --jobs N [--kind K] once, in a fresh process, with
    MALLOC_CONF=`pages` when given (SMALL_PAGES, HUGE_PAGES). Raises subprocess.TimeoutExpired
    past `timeout` seconds (the process is killed)."""
    env = dict(os.environ)
    if pages:
        env["MALLOC_CONF"] = pages
    argv = [os.path.join(bindir, "bench_scale_virtual"), "--jobs", str(jobs)]
    if kind:
        argv += ["--kind", kind]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env, cwd=cwd)
    lines = out.stdout.strip().splitlines()
    try:
        return Run(json.loads(lines[-1]), None)
    except (IndexError, ValueError):
        return Run(None, "no result (exit %d): %s" % (out.returncode, out.stderr[-400:]))
