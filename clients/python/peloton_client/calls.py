"""Changing a call's details in a client interceptor (the retries' deadline,
the bearer token's metadata)."""

import collections

import grpc


class CallDetails(
    collections.namedtuple(
        "CallDetails", ("method", "timeout", "metadata", "credentials", "wait_for_ready", "compression")
    ),
    grpc.ClientCallDetails,
):
    """A grpc.ClientCallDetails that interceptors can make anew."""


def with_changes(details, **changes):
    """details with the named fields changed (those not named are read from
    details; wait_for_ready and compression may be missing there)."""
    fields = {}
    for name in CallDetails._fields:
        if name in changes:
            fields[name] = changes[name]
        elif name in ("wait_for_ready", "compression"):
            fields[name] = getattr(details, name, None)
        else:
            fields[name] = getattr(details, name)
    return CallDetails(**fields)
