#!/usr/bin/env python3
"""A driver that launches its own executors, as Spark on Peloton does.

It runs as a task of a Peloton job and uses the API address the scheduler
hands every task (PELOTON_API_ADDR) to:

1. launch its executors as a second job (a service of 2 instances),
2. scale them up to 4 (dynamic allocation), collect each executor's partial
   result from its output,
3. scale them down to 1 and check the others stopped,
4. stop the executors' job and print the total.

Each executor sums the squares of its slice of 0..N-1 and prints
"result <instance> <partial>", then idles until stopped.
"""

import os
import sys
import time

from peloton.v1 import types_pb2 as types
from peloton_client import Client

N = 1_000_000
EXECUTORS = 4
EXECUTOR_CODE = r'''
import os, sys, time
i, n, parts = int(os.environ["PELOTON_INSTANCE_ID"]), int(sys.argv[1]), int(sys.argv[2])
print("result", i, sum(x * x for x in range(i, n, parts)), flush=True)
while True:
    time.sleep(60)
'''


def log(*args):
    print("driver:", *args, flush=True)


def running(tasks):
    return sorted(t.instance for t in tasks if t.state == types.TASK_STATE_RUNNING)


def main():
    addr = os.environ["PELOTON_API_ADDR"]
    me = os.environ.get("PELOTON_JOB_ID", "?")
    pool = os.environ.get("DRIVER_POOL", "/")
    with Client(addr) as c:
        log(f"job {me} calls the API at {addr}")
        spec = {
            "name": f"executors-of-{me}",
            "type": "service",
            "pool": pool,
            "instances": 2,
            "labels": {"driver": me},
            "task": {
                "command": sys.executable,
                "args": ["-c", EXECUTOR_CODE, str(N), str(EXECUTORS)],
                "resources": {"cpu": 0.1, "memMb": 32},
            },
        }
        executors = c.create_job(spec).id
        log("executors job", executors, "with 2 instances")
        c.wait_tasks(executors, lambda ts: len(running(ts)) == 2, timeout=60)

        c.scale_job(executors, EXECUTORS)
        log("scaled up to", EXECUTORS)
        c.wait_tasks(executors, lambda ts: len(running(ts)) == EXECUTORS, timeout=60)

        partials = {}
        deadline = time.monotonic() + 60
        while len(partials) < EXECUTORS:
            for i in range(EXECUTORS):
                if i in partials:
                    continue
                for line in c.task_logs(executors, i).decode().splitlines():
                    f = line.split()
                    if len(f) == 3 and f[0] == "result" and int(f[1]) == i:
                        partials[i] = int(f[2])
            if time.monotonic() > deadline:
                raise SystemExit(f"driver: results of {sorted(partials)} only")
            time.sleep(0.2)
        log("partial results", [partials[i] for i in range(EXECUTORS)])

        c.scale_job(executors, 1)
        c.wait_tasks(executors, lambda ts: running(ts) == [0], timeout=60)
        log("scaled down to 1: only instance 0 runs")

        c.stop_job(executors)
        end = c.wait_job(executors, timeout=60)
        log("executors", Client.state_name(end))
        total = sum(partials.values())
        want = sum(x * x for x in range(N))
        log("total", total, "ok" if total == want else f"WRONG, want {want}")
        return 0 if total == want and end.status.state == types.JOB_STATE_KILLED else 1


if __name__ == "__main__":
    sys.exit(main())
