"""A thin client of the Peloton gRPC API.

    from peloton_client import Client
    with Client("127.0.0.1:5390") as c:
        job = c.create_job("examples/hello.yaml")
        done = c.wait_job(job.id, callback=lambda j: print(c.state_name(j)))

Every method is one or two calls of the generated stubs (peloton.v1); the
messages returned are the generated ones. Errors of the API are raised as
PelotonError, which carries the gRPC status code and the server's message.
A call the server shed for load is sent again after a backoff (retry.py).
"""

import os
import time

import grpc

from peloton.v1 import service_pb2 as svc
from peloton.v1 import service_pb2_grpc as stubs
from peloton.v1 import types_pb2 as types

from .retry import DEFAULT_MAX_ATTEMPTS, RetryInterceptor, retry_hint
from .spec import job_spec, load_job_spec, load_pool_spec, pool_spec
from .token import BearerInterceptor, find_token

__all__ = ["Client", "PelotonError", "TERMINAL_JOB_STATES", "TERMINAL_TASK_STATES", "DEFAULT_ADDR"]

DEFAULT_ADDR = "127.0.0.1:5390"

TERMINAL_JOB_STATES = frozenset(
    {types.JOB_STATE_SUCCEEDED, types.JOB_STATE_FAILED, types.JOB_STATE_KILLED}
)
TERMINAL_TASK_STATES = frozenset(
    {types.TASK_STATE_SUCCEEDED, types.TASK_STATE_FAILED, types.TASK_STATE_KILLED, types.TASK_STATE_LOST}
)


class PelotonError(Exception):
    """An error returned by the API: `code` is a grpc.StatusCode;
    `retry_delay` is the server's hint (seconds) when it refused the call
    for load, else None."""

    def __init__(self, code, details, retry_delay=None):
        super().__init__(f"{code.name}: {details}")
        self.code = code
        self.details = details
        self.retry_delay = retry_delay


def _api(fn):
    """Turns grpc.RpcError into PelotonError."""

    def call(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except grpc.RpcError as e:
            raise PelotonError(e.code(), e.details(), retry_hint(e)) from None

    call.__name__, call.__doc__ = fn.__name__, fn.__doc__
    return call


class Client:
    """A connection to any gateway of a Peloton federation.

    addr defaults to $PELOTON_ADDR, then 127.0.0.1:5390. timeout is the
    deadline of each unary call in seconds, its retries included.
    max_attempts bounds the sends of one call: a call the server shed for
    load (RESOURCE_EXHAUSTED with a retry hint), or a read that found it
    UNAVAILABLE, is sent again after a backoff; 1 turns retries off.
    `retried` counts the sends after the first so far.
    token is the bearer token to send; without it $PELOTON_TOKEN, then,
    for a loopback addr, the token a `peloton dev` cluster there keeps for
    its user's clients (token.py).
    """

    def __init__(self, addr=None, timeout=30.0, channel=None, max_attempts=DEFAULT_MAX_ATTEMPTS, token=None):
        self.addr = addr or os.environ.get("PELOTON_ADDR") or DEFAULT_ADDR
        self.timeout = timeout
        self._retry = RetryInterceptor(max_attempts)
        interceptors = [self._retry]
        self.token = token = find_token(self.addr, token)
        if token:
            interceptors.append(BearerInterceptor(token))
        self._channel = grpc.intercept_channel(channel or grpc.insecure_channel(self.addr), *interceptors)
        self.jobs = stubs.JobServiceStub(self._channel)
        self.tasks = stubs.TaskServiceStub(self._channel)
        self.pools = stubs.PoolServiceStub(self._channel)
        self.hosts = stubs.HostServiceStub(self._channel)
        self.regions = stubs.RegionServiceStub(self._channel)
        self.events_service = stubs.EventServiceStub(self._channel)
        self.system = stubs.SystemServiceStub(self._channel)

    @property
    def retried(self):
        return self._retry.retried

    def close(self):
        self._channel.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # --- jobs ---

    @_api
    def create_job(self, spec):
        """Creates a job from a spec file path, YAML/JSON text, a mapping or
        a JobSpec; returns the Job (its tasks are created asynchronously)."""
        return self.jobs.CreateJob(svc.CreateJobRequest(spec=self._job_spec(spec)), timeout=self.timeout).job

    @_api
    def create_jobs(self, specs, request_id=""):
        """Creates many jobs in one call (CreateJobs); each spec is accepted
        or refused on its own. Returns one CreateJobsResult per spec, in
        order: job_id when accepted, code and message when refused. A retry
        with the same `request_id` creates nothing new."""
        req = svc.CreateJobsRequest(request_id=request_id, jobs=[self._job_spec(s) for s in specs])
        return list(self.jobs.CreateJobs(req, timeout=self.timeout).results)

    @_api
    def get_job(self, job_id):
        return self.jobs.GetJob(svc.GetJobRequest(id=job_id), timeout=self.timeout).job

    @_api
    def list_jobs(self, states=(), pool="", page_size=0):
        """Every job, optionally only those in `states` (JobState values) or
        `pool`, following the server's pages (of `page_size` jobs; 0 is the
        server's default) to the end."""
        out, token = [], ""
        while True:
            req = svc.ListJobsRequest(states=list(states), pool=pool, limit=page_size, page_token=token)
            resp = self.jobs.ListJobs(req, timeout=self.timeout)
            out.extend(resp.jobs)
            token = resp.next_page_token
            if not token:
                return out

    @_api
    def stop_job(self, job_id):
        return self.jobs.StopJob(svc.StopJobRequest(id=job_id), timeout=self.timeout).job

    @_api
    def suspend_job(self, job_id):
        """Stops a periodic job's ticks from launching runs."""
        return self.jobs.SuspendJob(svc.SuspendJobRequest(id=job_id), timeout=self.timeout).job

    @_api
    def resume_job(self, job_id):
        """Lets a suspended periodic job launch runs again from its next tick."""
        return self.jobs.ResumeJob(svc.ResumeJobRequest(id=job_id), timeout=self.timeout).job

    @_api
    def run_job(self, job_id):
        """Launches a run of a periodic job now; returns the run."""
        return self.jobs.RunJob(svc.RunJobRequest(id=job_id), timeout=self.timeout).run

    @_api
    def delete_job(self, job_id):
        self.jobs.DeleteJob(svc.DeleteJobRequest(id=job_id), timeout=self.timeout)

    @_api
    def job_config(self, job_id, version=0):
        """The job's spec (the current one, or `version`)."""
        return self.jobs.GetJobConfig(svc.GetJobConfigRequest(job_id=job_id, version=version), timeout=self.timeout).spec

    @_api
    def update_job(self, job_id, spec, batch_size=None, **options):
        """Rolls the job onto a new spec; options are UpdateJobRequest fields
        (max_failures, rollback_on_failure, min_healthy_seconds, in_place...)."""
        req = svc.UpdateJobRequest(job_id=job_id, spec=self._job_spec(spec), **options)
        if batch_size is not None:
            req.batch_size = batch_size
        return self.jobs.UpdateJob(req, timeout=self.timeout).update

    @_api
    def scale_job(self, job_id, instances, batch_size=None):
        """Sets the job's number of instances: an update of its current spec
        with only `instances` changed. New instances start; the
        highest-numbered ones stop, under the job's SLA. Returns the Update."""
        spec = self.jobs.GetJobConfig(svc.GetJobConfigRequest(job_id=job_id), timeout=self.timeout).spec
        spec.instances = instances
        req = svc.UpdateJobRequest(job_id=job_id, spec=spec)
        if batch_size is not None:
            req.batch_size = batch_size
        return self.jobs.UpdateJob(req, timeout=self.timeout).update

    @_api
    def get_update(self, update_id):
        return self.jobs.GetUpdate(svc.GetUpdateRequest(update_id=update_id), timeout=self.timeout).update

    def wait_job(self, job_id, callback=None, timeout=None, until=TERMINAL_JOB_STATES, poll=0.25):
        """Waits until the job is in one of `until` (by default a terminal
        state) and returns it. callback(job) is called with the job first
        and then whenever its state or its count of tasks per state changes.
        Raises TimeoutError after `timeout` seconds (None: no limit)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        last = None
        while True:
            job = self.get_job(job_id)
            seen = (job.status.state, tuple(sorted(job.status.task_states.items())))
            if callback is not None and seen != last:
                callback(job)
            last = seen
            if job.status.state in until:
                return job
            if deadline is not None and time.monotonic() >= deadline:
                raise TimeoutError(f"job {job_id} still {types.JobState.Name(job.status.state)} after {timeout}s")
            time.sleep(poll)

    def wait_tasks(self, job_id, predicate, timeout=60.0, poll=0.25):
        """Waits until predicate(tasks) holds for the job's tasks; returns them."""
        deadline = time.monotonic() + timeout
        while True:
            tasks = self.list_tasks(job_id)
            if predicate(tasks):
                return tasks
            if time.monotonic() >= deadline:
                raise TimeoutError(f"job {job_id}: tasks not as expected after {timeout}s")
            time.sleep(poll)

    # --- tasks ---

    @_api
    def list_tasks(self, job_id, states=()):
        req = svc.ListTasksRequest(job_id=job_id, states=list(states))
        return list(self.tasks.ListTasks(req, timeout=self.timeout).tasks)

    @_api
    def get_task(self, job_id, instance):
        return self.tasks.GetTask(svc.GetTaskRequest(job_id=job_id, instance=instance), timeout=self.timeout).task

    @_api
    def task_logs(self, job_id, instance, stream="stdout", run=0):
        """A task's output (the current run's, or `run`'s) as bytes."""
        req = svc.GetTaskLogsRequest(job_id=job_id, instance=instance, stream=stream, run=run)
        return self.tasks.GetTaskLogs(req, timeout=self.timeout).data

    @_api
    def stop_tasks(self, job_id, instances=(), force=False):
        req = svc.StopTasksRequest(job_id=job_id, instances=list(instances), force=force)
        return list(self.tasks.StopTasks(req, timeout=self.timeout).tasks)

    # --- pools ---

    @_api
    def create_pool(self, spec):
        """Creates a pool from a spec file path, YAML/JSON text, a mapping or a PoolSpec."""
        return self.pools.CreatePool(svc.CreatePoolRequest(spec=self._pool_spec(spec)), timeout=self.timeout).pool

    @_api
    def get_pool(self, path):
        return self.pools.GetPool(svc.GetPoolRequest(path=path), timeout=self.timeout).pool

    @_api
    def list_pools(self):
        return list(self.pools.ListPools(svc.ListPoolsRequest(), timeout=self.timeout).pools)

    # --- events ---

    def events(self, job_id="", after_seq=0, timeout=None):
        """A stream of Events as they happen (of one job, or of all); iterate
        it, and call .cancel() on it to stop early. timeout (seconds) ends
        the stream with PelotonError(DEADLINE_EXCEEDED)."""
        call = self.events_service.Watch(svc.WatchRequest(job_id=job_id, after_seq=after_seq), timeout=timeout)
        return _EventStream(call)

    @_api
    def version(self):
        return self.system.GetVersion(svc.GetVersionRequest(), timeout=self.timeout)

    # --- helpers ---

    @staticmethod
    def state_name(job_or_task):
        """The short name of a job's or task's state: "RUNNING"."""
        if isinstance(job_or_task, types.Job):
            return types.JobState.Name(job_or_task.status.state)[len("JOB_STATE_"):]
        return types.TaskState.Name(job_or_task.state)[len("TASK_STATE_"):]

    @staticmethod
    def _job_spec(spec):
        if isinstance(spec, types.JobSpec):
            return spec
        if isinstance(spec, dict):
            return job_spec(spec)
        return load_job_spec(spec)

    @staticmethod
    def _pool_spec(spec):
        if isinstance(spec, types.PoolSpec):
            return spec
        if isinstance(spec, dict):
            return pool_spec(spec)
        return load_pool_spec(spec)


class _EventStream:
    """Iterates a Watch call, raising PelotonError instead of grpc.RpcError;
    ends quietly when cancelled."""

    def __init__(self, call):
        self._call = call

    def __iter__(self):
        try:
            for event in self._call:
                yield event
        except grpc.RpcError as e:
            if e.code() == grpc.StatusCode.CANCELLED:
                return
            raise PelotonError(e.code(), e.details()) from None

    def cancel(self):
        self._call.cancel()
