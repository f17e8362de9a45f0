#!/usr/bin/env python3
"""Minimal CQL native-protocol (v4) client used by cassandra.sh.

It needs nothing beyond the Python standard library. Two modes:

  cqlprobe.py ready HOST PORT
      Sends OPTIONS, expects SUPPORTED, then STARTUP, expects READY, then
      asks system.local for release_version. Prints the version and exits 0
      when the node answers CQL; exits 1 (with the reason on stderr) if not.

  cqlprobe.py query HOST PORT STATEMENT...
      Runs each statement in turn at consistency ONE and prints rows as
      tab-separated text (common scalar types decoded, others as hex).

  cqlprobe.py seen HOST PORT
      For a node of a cluster: exits 0 when the node and every peer that
      answers CQL know each other at their current gossip generation (a
      node started again has a new one), so that each takes the other
      for up; exits 1 naming who does not know whom yet.

Frame layout (protocol v4): version(1) flags(1) stream(2) opcode(1)
length(4), then the body. Only uncompressed frames are used.
"""

import socket
import struct
import sys
import uuid
import datetime

PROTOCOL_VERSION = 0x04
RESPONSE_BIT = 0x80

OP_ERROR = 0x00
OP_STARTUP = 0x01
OP_READY = 0x02
OP_AUTHENTICATE = 0x03
OP_OPTIONS = 0x05
OP_SUPPORTED = 0x06
OP_QUERY = 0x07
OP_RESULT = 0x08

RESULT_VOID = 0x0001
RESULT_ROWS = 0x0002
RESULT_SET_KEYSPACE = 0x0003
RESULT_PREPARED = 0x0004
RESULT_SCHEMA_CHANGE = 0x0005

CONSISTENCY_ONE = 0x0001

TYPE_NAMES = {
    0x0001: "ascii", 0x0002: "bigint", 0x0003: "blob", 0x0004: "boolean",
    0x0005: "counter", 0x0006: "decimal", 0x0007: "double", 0x0008: "float",
    0x0009: "int", 0x000B: "timestamp", 0x000C: "uuid", 0x000D: "varchar",
    0x000E: "varint", 0x000F: "timeuuid", 0x0010: "inet", 0x0011: "date",
    0x0012: "time", 0x0013: "smallint", 0x0014: "tinyint",
    0x0015: "duration",
}


class ProtocolError(Exception):
    """The server answered something this client did not expect."""


class Reader:
    """Cursor over a response body."""

    def __init__(self, data):
        self.data = data
        self.pos = 0

    def take(self, n):
        if n < 0 or self.pos + n > len(self.data):
            raise ProtocolError("truncated body")
        chunk = self.data[self.pos:self.pos + n]
        self.pos += n
        return chunk

    def byte(self):
        return self.take(1)[0]

    def short(self):
        return struct.unpack(">H", self.take(2))[0]

    def int(self):
        return struct.unpack(">i", self.take(4))[0]

    def string(self):
        return self.take(self.short()).decode("utf-8", "replace")

    def long_string(self):
        return self.take(self.int()).decode("utf-8", "replace")

    def bytes_value(self):
        n = self.int()
        if n < 0:
            return None
        return self.take(n)

    def string_list(self):
        return [self.string() for _ in range(self.short())]

    def string_multimap(self):
        return {self.string(): self.string_list() for _ in range(self.short())}

    def type_option(self):
        """Reads a column type as (name, inner types)."""
        type_id = self.short()
        if type_id == 0x0000:
            return (self.string(), ())
        if type_id in (0x0020, 0x0022):  # list, set
            inner = self.type_option()
            return ("list" if type_id == 0x0020 else "set", (inner,))
        if type_id == 0x0021:  # map
            return ("map", (self.type_option(), self.type_option()))
        if type_id == 0x0030:  # user-defined type: shown as hex
            self.string()
            name = self.string()
            for _ in range(self.short()):
                self.string()
                self.type_option()
            return (name, ())
        if type_id == 0x0031:  # tuple: shown as hex
            return ("tuple", tuple(self.type_option()
                                   for _ in range(self.short())))
        return (TYPE_NAMES.get(type_id, "0x%04x" % type_id), ())


def encode_string_map(pairs):
    out = struct.pack(">H", len(pairs))
    for key, value in pairs.items():
        for text in (key, value):
            raw = text.encode("utf-8")
            out += struct.pack(">H", len(raw)) + raw
    return out


class Connection:
    """One CQL connection that sends one request at a time."""

    def __init__(self, host, port, timeout):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.stream = 0

    def close(self):
        self.sock.close()

    def recv_exact(self, n):
        buf = b""
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise ProtocolError("connection closed by server")
            buf += chunk
        return buf

    def request(self, opcode, body=b""):
        self.stream = (self.stream + 1) % 0x7FFF
        header = struct.pack(">BBhBI", PROTOCOL_VERSION, 0, self.stream,
                             opcode, len(body))
        self.sock.sendall(header + body)
        while True:
            version, _flags, stream, op, length = struct.unpack(
                ">BBhBI", self.recv_exact(9))
            payload = self.recv_exact(length)
            if version != (PROTOCOL_VERSION | RESPONSE_BIT):
                raise ProtocolError("unexpected response version 0x%02x" % version)
            if stream != self.stream:
                continue  # server event or stale answer; not ours
            if op == OP_ERROR:
                r = Reader(payload)
                code = r.int()
                raise ProtocolError("server error 0x%04x: %s" % (code, r.string()))
            return op, Reader(payload)

    def handshake(self):
        op, body = self.request(OP_OPTIONS)
        if op != OP_SUPPORTED:
            raise ProtocolError("OPTIONS answered with opcode 0x%02x" % op)
        supported = body.string_multimap()
        cql_versions = supported.get("CQL_VERSION") or ["3.0.0"]
        op, _ = self.request(OP_STARTUP,
                             encode_string_map({"CQL_VERSION": cql_versions[0]}))
        if op == OP_AUTHENTICATE:
            raise ProtocolError("server requires authentication")
        if op != OP_READY:
            raise ProtocolError("STARTUP answered with opcode 0x%02x" % op)
        return supported

    def query(self, statement):
        raw = statement.encode("utf-8")
        body = struct.pack(">i", len(raw)) + raw
        body += struct.pack(">HB", CONSISTENCY_ONE, 0)
        op, reader = self.request(OP_QUERY, body)
        if op != OP_RESULT:
            raise ProtocolError("QUERY answered with opcode 0x%02x" % op)
        return parse_result(reader)


def parse_result(r):
    """Returns (kind, columns, rows) where rows are lists of (type, bytes)."""
    kind = r.int()
    if kind != RESULT_ROWS:
        if kind == RESULT_SET_KEYSPACE:
            return "keyspace " + r.string(), [], []
        if kind == RESULT_SCHEMA_CHANGE:
            change, target = r.string(), r.string()
            return "schema %s %s" % (change.lower(), target.lower()), [], []
        return "void" if kind == RESULT_VOID else "kind %d" % kind, [], []
    flags = r.int()
    column_count = r.int()
    if flags & 0x0002:
        r.bytes_value()  # paging state
    columns = []
    if not flags & 0x0004:
        global_spec = flags & 0x0001
        if global_spec:
            r.string()
            r.string()
        for _ in range(column_count):
            if not global_spec:
                r.string()
                r.string()
            name = r.string()
            columns.append((name, r.type_option()))
    rows = []
    for _ in range(r.int()):
        rows.append([r.bytes_value() for _ in range(column_count)])
    return "rows", columns, rows


def render_collection(column_type, value):
    name, inner = column_type
    r = Reader(value)
    items = []
    for _ in range(r.int()):
        if name == "map":
            key = render(inner[0], r.bytes_value())
            items.append("%s: %s" % (key, render(inner[1], r.bytes_value())))
        else:
            items.append(render(inner[0], r.bytes_value()))
    if r.pos != len(value):
        raise ProtocolError("trailing bytes in collection")
    brackets = {"list": "[]", "set": "{}", "map": "{}"}[name]
    return brackets[0] + ", ".join(items) + brackets[1]


def render(column_type, value):
    """Renders one cell as text; unknown or odd values become hex."""
    if value is None:
        return "null"
    type_name = column_type[0]
    try:
        if type_name in ("list", "set", "map"):
            return render_collection(column_type, value)
        if type_name in ("varchar", "ascii"):
            return value.decode("utf-8", "replace")
        if type_name == "int":
            return str(struct.unpack(">i", value)[0])
        if type_name in ("bigint", "counter"):
            return str(struct.unpack(">q", value)[0])
        if type_name == "smallint":
            return str(struct.unpack(">h", value)[0])
        if type_name == "tinyint":
            return str(struct.unpack(">b", value)[0])
        if type_name == "boolean":
            return "true" if value != b"\x00" else "false"
        if type_name == "double":
            return repr(struct.unpack(">d", value)[0])
        if type_name == "float":
            return repr(struct.unpack(">f", value)[0])
        if type_name in ("uuid", "timeuuid"):
            return str(uuid.UUID(bytes=value))
        if type_name == "timestamp":
            millis = struct.unpack(">q", value)[0]
            epoch = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
            return (epoch + datetime.timedelta(milliseconds=millis)).isoformat()
        if type_name == "inet":
            return socket.inet_ntop(
                socket.AF_INET if len(value) == 4 else socket.AF_INET6, value)
    except (struct.error, ValueError, OSError, OverflowError, ProtocolError):
        pass
    return "0x" + value.hex()


def query_once(host, port, statement):
    """Connects, runs one statement, and returns its (columns, rows)."""
    conn = Connection(host, port, timeout=5)
    try:
        conn.handshake()
        _, columns, rows = conn.query(statement)
        return columns, rows
    finally:
        conn.close()


def cmd_ready(host, port):
    columns, rows = query_once(
        host, port, "SELECT release_version FROM system.local WHERE key = 'local'")
    if not rows or not columns:
        raise ProtocolError("system.local returned no row")
    print(render(columns[0][1], rows[0][0]))
    return 0


def cmd_query(host, port, statements):
    conn = Connection(host, port, timeout=30)
    try:
        conn.handshake()
        for statement in statements:
            kind, columns, rows = conn.query(statement)
            if kind != "rows":
                print(kind)
                continue
            print("\t".join(name for name, _ in columns))
            for row in rows:
                print("\t".join(render(columns[i][1], cell)
                                for i, cell in enumerate(row)))
            print("(%d rows)" % len(rows))
    finally:
        conn.close()
    return 0


def gossip_generations(host, port):
    """The gossip generation of every node that host's gossip knows."""
    columns, rows = query_once(
        host, port, "SELECT address, generation FROM system_views.gossip_info")
    return {render(columns[0][1], row[0]): render(columns[1][1], row[1])
            for row in rows}


def cmd_seen(host, port):
    own = gossip_generations(host, port)
    if host not in own:
        raise ProtocolError("%s does not list itself in gossip_info" % host)
    missing = []
    for peer, generation in sorted(own.items()):
        if peer == host:
            continue
        try:
            theirs = gossip_generations(peer, port)
        except (OSError, ProtocolError):
            continue  # not running, or not answering CQL: not waited for
        if theirs.get(peer) != generation:
            missing.append("%s does not know %s's generation" % (host, peer))
        if theirs.get(host) != own[host]:
            missing.append("%s does not know %s's generation" % (peer, host))
    if missing:
        sys.stderr.write("; ".join(missing) + "\n")
        return 1
    return 0


def main(argv):
    if len(argv) < 4 or argv[1] not in ("ready", "query", "seen"):
        sys.stderr.write(__doc__)
        return 2
    host, port = argv[2], int(argv[3])
    try:
        if argv[1] == "ready":
            return cmd_ready(host, port)
        if argv[1] == "seen":
            return cmd_seen(host, port)
        if len(argv) < 5:
            sys.stderr.write("query needs at least one statement\n")
            return 2
        return cmd_query(host, port, argv[4:])
    except (OSError, ProtocolError, struct.error) as err:
        sys.stderr.write("cql: %s\n" % err)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
