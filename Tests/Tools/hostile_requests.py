#!/usr/bin/env python3
"""Sends malformed and hostile HTTP requests to a server and reports how each was answered.

Usage: hostile_requests.py HOST:PORT --count N [--seed S] [--pid PID] [--path PATH]

Each request, drawn with a seeded generator from these kinds, goes on its own connection: a bad
method, a huge header (64 to 200 kB), bad percent-encoding, a path climbing with `..` (plain and
encoded), a NUL byte in the path, an absurd or inverted Range, a query of 100 kB, a header line
without a colon, a request line with an unknown HTTP version, and garbage bytes. The answer's status
is read (0 when the server closed the connection without one, which counts as a refusal for the
kinds that are not valid HTTP at all). Some kinds have a right answer that is not a 4xx: an unknown
HTTP version gets 505 (RFC 9110 15.6.6); a Range that is not valid syntax (inverted, not numbers, past
any integer) is ignored and the whole file sent, 200 (RFC 9110 14.2); and a NUL byte ends the path
where libmicrohttpd reads it, so the file named before it may be sent (never another). With --pid, the server's resident memory is read from /proc
before and after, and after a second round of the same size. Prints one JSON line
{"requests", "statuses": {kind: {status: count}}, "not4xx": [...], "rssKB": [before, after, again],
"alive"}; exits 0 when every answer was a 4xx (or a closed connection for what is not HTTP), the
server still answers a valid request, and the memory grew by less than 8 MB over the second round.
"""
import argparse
import json
import random
import socket
import ssl
import sys
import time

TIMEOUT_SECONDS = 10
# Kinds that are not HTTP at all: a server may close the connection instead of answering.
NOT_HTTP = {"garbage", "version", "nul"}
# Answers other than a 4xx that are right for a kind (see above).
ALSO_RIGHT = {"version": {505}, "range": {200}, "nul": {200}}


def request_for(kind, rng, path):
    if kind == "method":
        return f"{rng.choice(['FOO', 'PUT', 'DELETE', 'TRACE', 'CONNECT', 'PATCH'])} {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode()
    if kind == "huge-header":
        return f"GET {path} HTTP/1.1\r\nHost: x\r\nX-Big: {'a' * rng.randint(70_000, 200_000)}\r\n\r\n".encode()
    if kind == "percent":
        return f"GET /{rng.choice(['%zz', '%', '%0', '%%41', 'seg/%G1.m4s'])}playlist.m3u8 HTTP/1.1\r\nHost: x\r\n\r\n".encode()
    if kind == "dotdot":
        target = rng.choice(["/../../etc/passwd", "/seg/../../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd",
                             "/..%2f..%2fetc/passwd", "/seg/..%252f..%252fpasswd.m3u8"])
        return f"GET {target} HTTP/1.1\r\nHost: x\r\n\r\n".encode()
    if kind == "nul":
        return b"GET /playlist.m3u8\x00.txt HTTP/1.1\r\nHost: x\r\n\r\n"
    if kind == "range":
        header = rng.choice(["bytes=99999999999999999999-", "bytes=500-100", "bytes=-0", "bytes=999999999-999999999999",
                             "bytes=--5", "bytes=a-b", "bytes=999999999-"])
        return f"GET /seg/000001.m4s HTTP/1.1\r\nHost: x\r\nRange: {header}\r\n\r\n".encode()
    if kind == "query":
        return f"GET {path}?q={'x' * 100_000} HTTP/1.1\r\nHost: x\r\n\r\n".encode()
    if kind == "header-line":
        return f"GET {path} HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n".encode()
    if kind == "version":
        return f"GET {path} HTTP/9.7\r\nHost: x\r\n\r\n".encode()
    return bytes(rng.randrange(256) for _ in range(rng.randint(1, 4096))) + b"\r\n\r\n"


KINDS = ["method", "huge-header", "percent", "dotdot", "nul", "range", "query", "header-line", "version", "garbage"]


def connect(address, tls):
    """A socket to the server; with `tls`, HTTP/1.1 over TLS (ALPN http/1.1), any certificate trusted."""
    sock = socket.create_connection(address, timeout=TIMEOUT_SECONDS)
    if not tls:
        return sock
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    context.set_alpn_protocols(["http/1.1"])
    return context.wrap_socket(sock, server_hostname=address[0])


def send(address, payload, tls=False):
    """The status of the answer, 0 when the connection closed without one."""
    with connect(address, tls) as sock:
        try:
            sock.sendall(payload)
        except OSError:
            pass  # the server may close while a huge request is still going out
        data = b""
        try:
            while b"\r\n" not in data:
                chunk = sock.recv(4096)
                if not chunk:
                    break
                data += chunk
        except OSError:
            pass
    line = data.split(b"\r\n", 1)[0].split()
    return int(line[1]) if len(line) >= 2 and line[1].isdigit() else 0


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("address")
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--pid", type=int)
    parser.add_argument("--path", default="/playlist.m3u8")
    parser.add_argument("--valid", default="/playlist.m3u8", help="a request that must still succeed afterwards")
    parser.add_argument("--tls", action="store_true", help="HTTP/1.1 over TLS, any certificate trusted")
    args = parser.parse_args(argv)
    host, port = args.address.rsplit(":", 1)
    address = (host, int(port))
    rng = random.Random(args.seed)
    statuses, not4xx, memory = {}, [], []
    if args.pid:
        memory.append(rss_kb(args.pid))
    for round_index in range(2 if args.pid else 1):
        for _ in range(args.count):
            kind = rng.choice(KINDS)
            status = send(address, request_for(kind, rng, args.path), args.tls)
            statuses.setdefault(kind, {}).setdefault(str(status), 0)
            statuses[kind][str(status)] += 1
            if not (400 <= status < 500 or (status == 0 and kind in NOT_HTTP) or status in ALSO_RIGHT.get(kind, ())):
                not4xx.append(f"{kind}: {status}")
        if args.pid:
            memory.append(rss_kb(args.pid))
    alive = send(address, f"GET {args.valid} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode(), args.tls)
    report = {"requests": args.count * (2 if args.pid else 1), "statuses": statuses, "not4xx": not4xx[:20],
              "rssKB": memory, "alive": alive}
    print(json.dumps(report), flush=True)
    grew = memory[2] - memory[1] if len(memory) == 3 else 0
    return 0 if not not4xx and alive == 200 and grew < 8 * 1024 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
