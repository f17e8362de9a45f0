#!/usr/bin/env python3
"""Submits driver.py as a one-instance batch job and follows it.

    python3 examples/driver/submit.py [--addr 127.0.0.1:5390] [--pool /]
Exit code 0 when the driver succeeded; its output is printed.
"""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CLIENT = os.path.join(HERE, "..", "..", "clients", "python")
sys.path.insert(0, CLIENT)

from peloton.v1 import types_pb2 as types  # noqa: E402
from peloton_client import Client  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--addr", default=None)
    ap.add_argument("--pool", default="/")
    ap.add_argument("--timeout", type=float, default=180)
    a = ap.parse_args()
    with Client(a.addr) as c:
        env = {"PYTHONPATH": os.path.abspath(CLIENT), "DRIVER_POOL": a.pool}
        if c.token:
            # The driver calls the API with the submitter's token; on a
            # secured server give it a token of its own, owner of its pool.
            env["PELOTON_TOKEN"] = c.token
        job = c.create_job({
            "name": "driver", "type": "batch", "pool": a.pool, "instances": 1, "maxAttempts": 1,
            "task": {
                "command": sys.executable,
                "args": [os.path.join(HERE, "driver.py")],
                "env": env,
                "resources": {"cpu": 0.1, "memMb": 64},
            },
        })
        print("driver job", job.id, flush=True)
        end = c.wait_job(job.id, callback=lambda j: print("driver", Client.state_name(j), flush=True), timeout=a.timeout)
        sys.stdout.write(c.task_logs(job.id, 0).decode())
        sys.stderr.write(c.task_logs(job.id, 0, stream="stderr").decode())
        return 0 if end.status.state == types.JOB_STATE_SUCCEEDED else 1


if __name__ == "__main__":
    sys.exit(main())
