"""Retries of shed calls: the backoff, the retry rules on scripted
failures, and a `peloton dev` whose in-flight limit is one call, hammered
by many threads so that it sheds."""

import random
import re
import threading
import urllib.request

import grpc
import pytest
from google.protobuf import any_pb2, duration_pb2
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

from peloton_client import Client, PelotonError
from peloton_client.retry import MAX_BACKOFF, MAX_HINT, READS, RetryInterceptor, backoff
from peloton_client.token import find_token

from conftest import Dev, free_addr

# --- the backoff ---


@pytest.mark.parametrize(
    "n, hint, u, want",
    [
        (0, None, 0.5, 0.2),  # no jitter at the middle
        (1, None, 0.5, 0.4),  # doubles
        (10, None, 0.5, MAX_BACKOFF),  # capped
        (0, None, 0.0, 0.16),  # -20 %
        (10, None, 1.0, 6.0),  # +20 % of the cap
        (0, 1.0, 0.0, 1.0),  # at least the hint
        (0, 1.0, 0.5, 1.1),  # spread above it
        (3, 1.0, 0.5, 1.6),  # the backoff once it passes the hint
        (0, 3600.0, 0.0, MAX_HINT),  # a hint counts for at most 30 s
    ],
)
def test_backoff(n, hint, u, want):
    assert backoff(n, hint, u) == pytest.approx(want)


def test_backoff_bounds():
    rnd = random.Random(7)
    for _ in range(5000):
        n, u = rnd.randrange(12), rnd.random()
        hint = rnd.choice([None, 0.05, 1.0, 4.0, 10.0, 100.0])
        base = min(0.2 * 2**n, MAX_BACKOFF)
        d = backoff(n, hint, u)
        if hint is None:
            assert 0.8 * base <= d <= 1.2 * base
        else:
            assert min(hint, MAX_HINT) <= d <= 1.2 * max(base, min(hint, MAX_HINT))


# --- the rules, on scripted failures ---


class _Failure(grpc.RpcError):
    """A failed call as grpc raises it: code, details, trailing metadata."""

    def __init__(self, code, hint=None):
        st = status_pb2.Status(code=code.value[0], message="scripted")
        if hint is not None:
            packed = any_pb2.Any()
            packed.Pack(error_details_pb2.RetryInfo(retry_delay=duration_pb2.Duration(seconds=hint)))
            st.details.append(packed)
        self._status = rpc_status.to_status(st)

    def code(self):
        return self._status.code

    def details(self):
        return self._status.details

    def trailing_metadata(self):
        return self._status.trailing_metadata


class _Outcome:
    def __init__(self, err=None):
        self._err = err

    def exception(self):
        return self._err


class _Script:
    """A fake clock, sleep and server: each send takes `cost` seconds and
    fails with the next of `failures`, then succeeds."""

    def __init__(self, failures, cost=0.0):
        self.now, self.sleeps, self.sends, self.timeouts = 0.0, [], 0, []
        self._failures, self._cost = list(failures), cost

    def clock(self):
        return self.now

    def sleep(self, d):
        self.sleeps.append(d)
        self.now += d

    def continuation(self, details, request):
        self.sends += 1
        self.timeouts.append(details.timeout)
        self.now += self._cost
        return _Outcome(self._failures.pop(0) if self._failures else None)

    def call(self, method, timeout=None, max_attempts=6):
        it = RetryInterceptor(max_attempts, clock=self.clock, sleep=self.sleep, rand=lambda: 0.5)
        details = RetryInterceptor._with_timeout(_Call(method), timeout)
        return it.intercept_unary_unary(self.continuation, details, None), it


class _Call:
    def __init__(self, method):
        self.method, self.metadata, self.credentials = method, None, None


GET, CREATE = "/peloton.v1.JobService/GetJob", "/peloton.v1.JobService/CreateJob"
SHED = grpc.StatusCode.RESOURCE_EXHAUSTED


def test_reads_come_from_the_api():
    assert GET in READS and "/peloton.v1.TaskService/ListTasks" in READS
    assert CREATE not in READS and "/peloton.v1.JobService/StopJob" not in READS


def test_shed_call_retried_after_the_hint():
    s = _Script([_Failure(SHED, hint=2), _Failure(SHED, hint=2)])
    out, it = s.call(CREATE, timeout=30)
    assert out.exception() is None
    assert s.sends == 3 and it.retried == 2
    assert s.sleeps == [pytest.approx(2.2), pytest.approx(2.2)]
    # Each send gets what is left of the call's deadline.
    assert s.timeouts == [30, pytest.approx(27.8), pytest.approx(25.6)]


def test_refusals_not_retried():
    # Over a size limit: ResourceExhausted without a hint.
    s = _Script([_Failure(SHED)])
    out, _ = s.call(GET)
    assert out.exception().code() == SHED and s.sends == 1
    # A write that found the server unavailable may have been done.
    s = _Script([_Failure(grpc.StatusCode.UNAVAILABLE)])
    out, _ = s.call(CREATE)
    assert out.exception().code() == grpc.StatusCode.UNAVAILABLE and s.sends == 1
    s = _Script([_Failure(grpc.StatusCode.INVALID_ARGUMENT)])
    out, _ = s.call(GET)
    assert s.sends == 1


def test_unavailable_read_backs_off_up_to_max_attempts():
    s = _Script([_Failure(grpc.StatusCode.UNAVAILABLE)] * 10)
    out, it = s.call(GET, max_attempts=4)
    assert out.exception().code() == grpc.StatusCode.UNAVAILABLE
    assert s.sends == 4 and it.retried == 3
    assert s.sleeps == [pytest.approx(0.2), pytest.approx(0.4), pytest.approx(0.8)]


def test_no_wait_past_the_deadline():
    # Shed after 1 s of a 3 s deadline: one wait of 2.2 s would pass it.
    s = _Script([_Failure(SHED, hint=2)] * 3, cost=1.0)
    out, _ = s.call(CREATE, timeout=3)
    assert out.exception().code() == SHED
    assert s.sends == 1 and s.sleeps == []


def test_max_attempts_checked():
    with pytest.raises(ValueError, match="max_attempts"):
        Client(free_addr(), max_attempts=0)


# --- a server that sheds ---


@pytest.fixture(scope="module")
def shedding():
    d = Dev("--limit-in-flight", "1", "--limit-in-flight-wait", "1ms")
    yield d
    d.stop()


def shed_total(dev):
    req = urllib.request.Request(f"http://{dev.addr}/metrics", headers={"Authorization": "Bearer " + find_token(dev.addr)})
    with urllib.request.urlopen(req, timeout=5) as r:
        m = re.search(rb"^peloton_gateway_calls_shed_total (\d+)", r.read(), re.M)
    return int(m.group(1))


def hammer(threads, work):
    """Runs work(i) on `threads` threads started together; returns the
    PelotonErrors they raised."""
    errors, lock, start = [], threading.Lock(), threading.Barrier(threads)

    def run(i):
        start.wait()
        try:
            work(i)
        except PelotonError as e:
            with lock:
                errors.append(e)

    ts = [threading.Thread(target=run, args=(i,)) for i in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return errors


def job(name):
    return {
        "name": name,
        "type": "batch",
        "instances": 1,
        "task": {"command": "true", "resources": {"cpu": 0.01, "memMb": 4}},
    }


def test_shed_calls_are_retried_and_succeed(shedding):
    threads, created, shed = 32, [], 0
    lock = threading.Lock()
    with Client(shedding.addr) as c:
        # Rounds until the server shed some calls (it does in the first
        # on any machine seen so far; the bound keeps a failure short).
        for rnd in range(5):
            before = shed_total(shedding)

            def work(i):
                j = c.create_job(job(f"py-shed-{rnd}-{i}"))
                with lock:
                    created.append(j.id)
                for _ in range(4):
                    c.get_job(j.id)
                    c.list_jobs(page_size=5)

            errors = hammer(threads, work)
            assert errors == [], errors[:3]
            shed += shed_total(shedding) - before
            if shed:
                break
        print(f"\n{len(created)} creates and {len(created) * 9} calls in all; {shed} shed, {c.retried} sent again")
        assert shed > 0, "the server shed nothing: the test did not test retries"
        # Every shed call was sent again, and only those.
        assert c.retried == shed
        # A shed create ran nothing: each job exists once.
        names = [j.spec.name for j in c.list_jobs() if j.spec.name.startswith("py-shed-")]
        assert len(names) == len(set(names)) == len(created) == len(set(created))


def test_without_retries_the_caller_sees_resource_exhausted(shedding):
    with Client(shedding.addr, max_attempts=1) as c:
        for _ in range(5):
            before = shed_total(shedding)
            errors = hammer(32, lambda i: [c.list_jobs(page_size=5) for _ in range(20)])
            shed = shed_total(shedding) - before
            if errors:
                break
        print(f"\n{len(errors)} callers stopped by a refusal; {shed} calls shed")
        assert errors, "the server shed nothing"
        assert {e.code for e in errors} == {grpc.StatusCode.RESOURCE_EXHAUSTED}
        assert {e.retry_delay for e in errors} == {1.0}
        # Each thread stops at its first refusal: one shed call each.
        assert len(errors) == shed
        assert c.retried == 0


def test_unavailable_read_retried_write_not():
    with Client(free_addr(), timeout=10, max_attempts=3) as c:
        with pytest.raises(PelotonError) as e:
            c.list_jobs()
        assert e.value.code == grpc.StatusCode.UNAVAILABLE
        assert c.retried == 2
        with pytest.raises(PelotonError) as e:
            c.create_job(job("py-unreachable"))
        assert e.value.code == grpc.StatusCode.UNAVAILABLE
        assert c.retried == 2
