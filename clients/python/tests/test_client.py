"""The client against a running `peloton dev` (local hosts: real processes)."""

import threading

import grpc
import pytest

from peloton.v1 import types_pb2 as types
from peloton_client import Client, PelotonError

from conftest import REPO


def batch(name, command, instances=1):
    return {
        "name": name,
        "type": "batch",
        "instances": instances,
        "task": {"command": "sh", "args": ["-c", command], "resources": {"cpu": 0.1, "memMb": 16}},
    }


def test_create_from_file_wait_with_callback(client):
    job = client.create_job(REPO / "examples" / "hello.yaml")
    assert job.id
    seen = []
    done = client.wait_job(job.id, callback=lambda j: seen.append(Client.state_name(j)), timeout=60)
    assert done.status.state == types.JOB_STATE_SUCCEEDED
    assert seen[-1] == "SUCCEEDED"
    assert len(seen) >= 2, seen  # called again when the state changed
    assert b"Hello, world" in client.task_logs(job.id, 0)


def test_list_by_state_and_pool(client):
    job = client.create_job(batch("py-list", "exit 0", instances=2))
    client.wait_job(job.id, timeout=60)
    ids = [j.id for j in client.list_jobs(states=[types.JOB_STATE_SUCCEEDED])]
    assert job.id in ids
    assert job.id not in [j.id for j in client.list_jobs(states=[types.JOB_STATE_RUNNING])]
    assert job.id in [j.id for j in client.list_jobs(pool="/")]
    # One job per page: the client follows the pages to the end.
    client.create_job(batch("py-list-2", "exit 0"))
    every = [j.id for j in client.list_jobs()]
    assert len(every) >= 2
    assert [j.id for j in client.list_jobs(page_size=1)] == every
    tasks = client.list_tasks(job.id)
    assert sorted(t.instance for t in tasks) == [0, 1]
    assert all(t.state == types.TASK_STATE_SUCCEEDED for t in tasks)


def test_event_stream(client):
    job = client.create_job(batch("py-events", "sleep 0.5", instances=2))
    stream = client.events(job_id=job.id, timeout=60)
    task_states, job_states = set(), []
    for ev in stream:
        assert ev.job_id == job.id and ev.seq > 0
        kind = ev.WhichOneof("kind")
        if kind == "task":
            task_states.add((ev.task.instance, ev.task.state))
        elif kind == "job":
            job_states.append(ev.job.state)
            if ev.job.state == types.JOB_STATE_SUCCEEDED:
                stream.cancel()
                break
    assert job_states[-1] == types.JOB_STATE_SUCCEEDED
    assert (0, types.TASK_STATE_SUCCEEDED) in task_states and (1, types.TASK_STATE_SUCCEEDED) in task_states


def test_event_stream_can_be_cancelled_from_another_thread(client):
    job = client.create_job(batch("py-cancel", "sleep 30"))
    stream = client.events(job_id=job.id)
    got = []
    t = threading.Thread(target=lambda: got.extend(stream))
    t.start()
    client.wait_job(job.id, until={types.JOB_STATE_RUNNING}, timeout=60)
    stream.cancel()
    t.join(10)
    assert not t.is_alive()
    client.stop_job(job.id)
    assert client.wait_job(job.id, timeout=60).status.state == types.JOB_STATE_KILLED


def test_bad_spec_names_the_field(client):
    spec = batch("py-bad", "true")
    spec["task"]["resources"]["cpu"] = -1
    with pytest.raises(PelotonError) as err:
        client.create_job(spec)
    assert err.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert "task.resources.cpu" in err.value.details


def test_not_found(client):
    with pytest.raises(PelotonError) as err:
        client.get_job("no-such-job")
    assert err.value.code == grpc.StatusCode.NOT_FOUND


def test_scale_a_service_up_and_down(client):
    spec = {"name": "py-scale", "type": "service", "instances": 2,
            "task": {"command": "sleep", "args": ["3600"], "resources": {"cpu": 0.1, "memMb": 16}}}
    job = client.create_job(spec)

    def running(n):
        return lambda tasks: sum(t.state == types.TASK_STATE_RUNNING for t in tasks) == n

    client.wait_tasks(job.id, running(2))
    update = client.scale_job(job.id, 4)
    assert update.id
    tasks = client.wait_tasks(job.id, running(4))
    assert client.job_config(job.id).instances == 4
    client.scale_job(job.id, 1)
    client.wait_tasks(job.id, lambda ts: running(1)(ts) and all(
        t.state != types.TASK_STATE_RUNNING for t in ts if t.instance > 0))
    client.stop_job(job.id)
    client.wait_job(job.id, timeout=60)


def test_create_jobs_each_on_its_own_and_idempotent(client):
    good = batch("py-batch-ok", "exit 0")
    bad = batch("py-batch-bad", "exit 0")
    bad["task"]["resources"]["cpu"] = -1
    results = client.create_jobs([good, bad], request_id="py-batch-1")
    assert len(results) == 2
    assert results[0].job_id and results[0].code == 0
    assert not results[1].job_id and results[1].code == 3
    assert "jobs[1]" in results[1].message
    again = client.create_jobs([good, bad], request_id="py-batch-1")
    assert again[0].job_id == results[0].job_id
    client.wait_job(results[0].job_id, timeout=60)
