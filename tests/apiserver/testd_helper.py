"""Starts pjemu-apiserver-testd for the Python client tests and stops it again."""
import os
import subprocess
import tempfile
import time


class TestServer:
    def __init__(self, testd, *args):
        self.dir = tempfile.TemporaryDirectory(prefix="pjemu-apiserver-")
        self.kubeconfig = os.path.join(self.dir.name, "kubeconfig")
        self.proc = subprocess.Popen([testd, "--kubeconfig", self.kubeconfig, *args],
                                     stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        if not line.startswith("PORT "):
            self.stop()
            raise RuntimeError("testd did not start: %r" % line)
        self.port = int(line.split()[1])
        self.url = "http://127.0.0.1:%d" % self.port

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.dir.cleanup()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
