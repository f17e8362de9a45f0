"""Starts a `peloton dev` cluster for the tests of this directory.

The binary is $PELOTON_BIN, else bin/peloton of the repository (`make
build`). A missing binary fails the tests; it does not skip them.
"""

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "clients" / "python"))


def peloton_bin():
    path = os.environ.get("PELOTON_BIN") or str(REPO / "bin" / "peloton")
    if not os.access(path, os.X_OK):
        pytest.fail(f"no peloton binary at {path}: run `make build` or set PELOTON_BIN")
    return path


def free_addr():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{s.getsockname()[1]}"


class Dev:
    """A running `peloton dev`: addr, data_dir and its output so far."""

    def __init__(self, *extra):
        self.addr = free_addr()
        self.data_dir = tempfile.mkdtemp(prefix="peloton-pytest-")
        self.log = open(os.path.join(self.data_dir, "dev.log"), "w+b")
        args = [peloton_bin(), "dev", "--data-dir", os.path.join(self.data_dir, "data"), "--addr", self.addr, *extra]
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while True:
            if self.proc.poll() is not None:
                pytest.fail(f"peloton dev exited early ({self.proc.returncode}):\n{self.output()}")
            try:
                with urllib.request.urlopen(f"http://{self.addr}/healthz", timeout=1) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                pytest.fail(f"peloton dev not healthy after 30s:\n{self.output()}")
            time.sleep(0.05)

    def output(self):
        self.log.flush()
        self.log.seek(0)
        return self.log.read().decode(errors="replace")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        shutil.rmtree(self.data_dir, ignore_errors=True)


@pytest.fixture(scope="session")
def dev():
    d = Dev()
    yield d
    d.stop()


@pytest.fixture()
def client(dev):
    from peloton_client import Client

    with Client(dev.addr) as c:
        yield c
