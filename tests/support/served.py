"""Shared by the Python client tests that drive `pjemu serve`: check() records into FAILURES,
wait_for() polls a predicate, and served(pjemu) starts serve on a free port (HTTPS: the
kubeconfig it writes carries the cluster's CA) in a temporary folder, yields that kubeconfig's
path, then stops serve (SIGTERM, SIGKILL after 60 s), prints the tail of its output when a check
failed, and removes the folder. Import with the folder on sys.path (tests/support).
"""
import contextlib
import os
import subprocess
import sys
import tempfile
import time

FAILURES = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        FAILURES.append(what)


def wait_for(predicate, seconds=30):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return False


@contextlib.contextmanager
def served(pjemu, extra=()):
    with tempfile.TemporaryDirectory(prefix="pjemu-python-") as work:
        kubeconfig = os.path.join(work, "kubeconfig")
        log = os.path.join(work, "serve.out")
        with open(log, "w") as out:
            server = subprocess.Popen([pjemu, "serve", "--port", "0", "--kubeconfig", kubeconfig,
                                       "--output-dir", os.path.join(work, "state")] + list(extra),
                                      stdout=out, stderr=subprocess.STDOUT)
        try:
            if not wait_for(lambda: "serving the Kubernetes API" in open(log).read()):
                print(open(log).read())
                sys.exit(1)
            yield kubeconfig
        finally:
            server.terminate()
            try:
                server.wait(timeout=60)
            except subprocess.TimeoutExpired:
                server.kill()
            if FAILURES:
                print("--- serve output")
                print(open(log).read()[-3000:])
