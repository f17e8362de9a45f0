"""Retries of unary calls the server refused for a while.

The rules are the CLI's (cmd/peloton/cli/retry.go):

- RESOURCE_EXHAUSTED with a google.rpc.RetryInfo is a call the server shed
  for load before any of it ran: any call, a create too, is sent again, no
  sooner than the hint says. RESOURCE_EXHAUSTED without a hint (a request
  over a size limit) is final.
- UNAVAILABLE is retried only for reads (RPCs marked NO_SIDE_EFFECTS in
  the API): a write that found the server unavailable may have been done.
- The wait doubles from 0.2 s to at most 5 s, with jitter, so that callers
  refused together do not come back together; with a hint it is at least
  the hint (a hint over 30 s counts as 30 s).
- At most max_attempts sends, all within the call's deadline: a wait that
  would pass it ends the call with the last error.
"""

import random
import threading
import time

import grpc
from google.protobuf import descriptor_pb2
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from peloton.v1 import service_pb2 as svc

from .calls import with_changes

FIRST_BACKOFF = 0.2
MAX_BACKOFF = 5.0
JITTER = 0.2
MAX_HINT = 30.0
DEFAULT_MAX_ATTEMPTS = 6


def _reads():
    out = set()
    for service in svc.DESCRIPTOR.services_by_name.values():
        for m in service.methods:
            if m.GetOptions().idempotency_level == descriptor_pb2.MethodOptions.NO_SIDE_EFFECTS:
                out.add(f"/{service.full_name}/{m.name}")
    return frozenset(out)


READS = _reads()
"""The full names of the RPCs that only read."""


def retry_hint(err):
    """The RetryInfo delay of a failed call, in seconds, or None."""
    try:
        st = rpc_status.from_call(err)
    except (AttributeError, ValueError):
        return None
    if st is None:
        return None
    for detail in st.details:
        if detail.Is(error_details_pb2.RetryInfo.DESCRIPTOR):
            info = error_details_pb2.RetryInfo()
            detail.Unpack(info)
            if info.HasField("retry_delay"):
                return info.retry_delay.ToTimedelta().total_seconds()
    return None


def retryable(method, err):
    """(True, hint) when the failed call may be sent again; hint is the
    server's RetryInfo delay in seconds, or None."""
    code = err.code()
    if code == grpc.StatusCode.RESOURCE_EXHAUSTED:
        hint = retry_hint(err)
        return hint is not None, hint
    if code == grpc.StatusCode.UNAVAILABLE:
        return method in READS, None
    return False, None


def backoff(n, hint, u):
    """Seconds to wait before retry n (0 first), given the server's hint
    (seconds or None) and u, uniform in [0, 1): the doubling backoff
    within ±JITTER, and never less than the hint (capped at MAX_HINT),
    spread over up to +JITTER above it."""
    d = min(FIRST_BACKOFF * 2**n, MAX_BACKOFF) * (1 + JITTER * (2 * u - 1))
    if hint is not None and hint > 0:
        d = max(d, min(hint, MAX_HINT) * (1 + JITTER * u))
    return d


class RetryInterceptor(grpc.UnaryUnaryClientInterceptor):
    """Sends a unary call again as `retryable` allows, up to max_attempts
    sends within the call's timeout. `retried` counts the sends after the
    first, over every call."""

    def __init__(self, max_attempts=DEFAULT_MAX_ATTEMPTS, clock=time.monotonic, sleep=time.sleep, rand=random.random):
        if max_attempts < 1:
            raise ValueError(f"max_attempts: must be at least 1, not {max_attempts}")
        self.max_attempts = max_attempts
        self._clock, self._sleep, self._rand = clock, sleep, rand
        self._lock = threading.Lock()
        self._retried = 0

    @property
    def retried(self):
        with self._lock:
            return self._retried

    def intercept_unary_unary(self, continuation, details, request):
        timeout = details.timeout
        deadline = None if timeout is None else self._clock() + timeout
        for n in range(self.max_attempts):
            if n > 0:
                with self._lock:
                    self._retried += 1
            if deadline is not None:
                timeout = max(deadline - self._clock(), 0.0)
            outcome = continuation(self._with_timeout(details, timeout), request)
            err = outcome.exception()
            if not isinstance(err, grpc.RpcError) or n == self.max_attempts - 1:
                return outcome
            ok, hint = retryable(details.method, err)
            if not ok:
                return outcome
            wait = backoff(n, hint, self._rand())
            if deadline is not None and deadline - self._clock() < wait:
                return outcome
            self._sleep(wait)

    @staticmethod
    def _with_timeout(details, timeout):
        return with_changes(details, timeout=timeout)
