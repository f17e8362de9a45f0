"""The bearer token a client sends.

Given none, a client reads $PELOTON_TOKEN, and, calling a loopback address
without one, the token a `peloton dev` cluster on that address keeps for
its user's clients: <config dir>/peloton/dev/<host>_<port>.token, where the
config dir is $XDG_CONFIG_HOME or ~/.config (the CLI finds it the same
way, cmd/peloton/cli/devtoken.go). A token is never sent in the clear to
an address that is not loopback.
"""

import ipaddress
import os

import grpc

from .calls import with_changes

_TOKEN_ENV = "PELOTON_TOKEN"


def _split(addr):
    host, sep, port = addr.rpartition(":")
    if not sep:
        return addr, ""
    return host.strip("[]"), port


def is_loopback(addr):
    host, _ = _split(addr)
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def dev_token_file(addr):
    """Where a dev cluster listening on addr keeps its token."""
    host, port = _split(addr)
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "peloton", "dev", f"{host}_{port}.token")


def find_token(addr, token=None):
    """The token to send to addr: token, else $PELOTON_TOKEN, else a dev
    cluster's on a loopback addr, else None."""
    token = token or os.environ.get(_TOKEN_ENV)
    if token:
        if not is_loopback(addr):
            raise ValueError(f"refusing to send a token in the clear to {addr}")
        return token
    if not is_loopback(addr):
        return None
    host, port = _split(addr)
    hosts = [host] + (["127.0.0.1", "::1"] if host == "localhost" else [])
    for h in hosts:
        try:
            with open(dev_token_file(f"{h}:{port}")) as f:
                return f.read().strip() or None
        except FileNotFoundError:
            continue
    return None


class BearerInterceptor(
    grpc.UnaryUnaryClientInterceptor,
    grpc.UnaryStreamClientInterceptor,
):
    """Adds `authorization: Bearer <token>` to every call."""

    def __init__(self, token):
        self._header = ("authorization", "Bearer " + token)

    def _details(self, details):
        return with_changes(details, metadata=list(details.metadata or []) + [self._header])

    def intercept_unary_unary(self, continuation, details, request):
        return continuation(self._details(details), request)

    def intercept_unary_stream(self, continuation, details, request):
        return continuation(self._details(details), request)
