#!/usr/bin/env python3
"""An HTTP proxy on loopback that forwards to an origin and fails some uploads on purpose.

Usage: fault_proxy.py UPSTREAM_URL [--port P] [--fail-share F] [--seed N] [--latency S]
                      [--stall S] [--outage START:SECONDS ...] [--methods PUT,DELETE] [--paths REGEX]
                      [--keep-host]

For requests whose method is in --methods, a seeded random draw fails a share F of them,
in equal parts: answer 503, stall (read the request, say nothing for --stall seconds, then
close without forwarding), or reset the connection (RST, nothing forwarded). Every such
request waits --latency seconds first, which paces a client that runs faster than real time.
With --paths, only requests whose path matches the regular expression can fail (such as
'\.m3u8$' for the playlist alone). With --keep-host the client's Host header is forwarded, as a
load balancer in front of an object store does, so Signature V4 requests stay valid.
During an outage (START seconds after the first such request, for SECONDS) every connection
is reset at once, GETs included: the origin is unreachable. Other requests (the GETs of
players and pollers) pass through untouched outside outages.

POST /__control/down?seconds=S starts an outage now; GET /__stats returns the counts as JSON.
Prints "proxy http://127.0.0.1:PORT/" once listening; stops on SIGTERM or SIGINT and then
prints the counts as one JSON line.
"""
import argparse
import http.client
import http.server
import json
import random
import re
import signal
import socket
import struct
import sys
import threading
import time
import urllib.parse

CONTROL_DOWN = "/__control/down"
STATS = "/__stats"
HOP_BY_HOP = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade"}
UPSTREAM_TIMEOUT_SECONDS = 30
FAULTS = ("503", "stall", "reset")


class FaultPlan:
    """Decides each request's fate; one lock keeps the seeded sequence reproducible."""

    def __init__(self, args):
        self.fail_share = args.fail_share
        self.methods = set(args.methods.split(","))
        self.paths = re.compile(args.paths)
        self.random = random.Random(args.seed)
        self.scheduled_outages = [tuple(float(x) for x in spec.split(":")) for spec in args.outage]
        self.outages = []
        self.first_request = None
        self.lock = threading.Lock()
        self.counts = {"forwarded": 0, "503": 0, "stall": 0, "reset": 0, "outage": 0}

    def down_for(self, seconds):
        with self.lock:
            now = time.monotonic()
            self.outages.append((now, now + seconds))

    def in_outage(self):
        with self.lock:
            now = time.monotonic()
            return any(start <= now < end for start, end in self.outages)

    def fault_for(self, method, path="/"):
        """None to forward, else one of FAULTS."""
        if method not in self.methods:
            return None
        with self.lock:
            if self.first_request is None:
                self.first_request = time.monotonic()
                self.outages += [(self.first_request + start, self.first_request + start + length)
                                 for start, length in self.scheduled_outages]
            if self.paths.search(path) and self.random.random() < self.fail_share:
                return self.random.choice(FAULTS)
            return None

    def count(self, what):
        with self.lock:
            self.counts[what] += 1


def reset(connection):
    """Closes with RST instead of FIN: the client sees 'connection reset by peer'."""
    connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    connection.close()


class ProxyHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def handle_one_request(self):
        if self.server.plan.in_outage():
            self.server.plan.count("outage")
            self.close_connection = True
            reset(self.connection)
            return
        super().handle_one_request()

    def do_GET(self):
        if self.path == STATS:
            self.answer(200, json.dumps(self.server.plan.counts).encode(), "application/json")
            return
        self.proxy()

    def do_POST(self):
        parts = urllib.parse.urlsplit(self.path)
        if parts.path == CONTROL_DOWN:
            seconds = float(urllib.parse.parse_qs(parts.query).get("seconds", ["0"])[0])
            self.server.plan.down_for(seconds)
            self.answer(204, b"")
            return
        self.proxy()

    def do_PUT(self):
        self.proxy()

    def do_DELETE(self):
        self.proxy()

    def do_HEAD(self):
        self.proxy()

    def proxy(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        plan = self.server.plan
        fault = plan.fault_for(self.command, self.path)
        if self.command in plan.methods:
            time.sleep(self.server.latency)
        if fault:
            plan.count(fault)
            self.close_connection = True
            if fault == "503":
                self.answer(503, b"injected failure\n")
            elif fault == "stall":
                time.sleep(self.server.stall)
                self.connection.close()
            else:
                reset(self.connection)
            return
        plan.count("forwarded")
        dropped = HOP_BY_HOP | {"expect"} | (set() if self.server.keep_host else {"host"})
        headers = {k: v for k, v in self.headers.items() if k.lower() not in dropped}
        upstream = http.client.HTTPConnection(self.server.upstream.hostname, self.server.upstream.port,
                                              timeout=UPSTREAM_TIMEOUT_SECONDS)
        try:
            upstream.request(self.command, self.server.upstream.path.rstrip("/") + self.path, body, headers)
            reply = upstream.getresponse()
            data = reply.read()
        finally:
            upstream.close()
        self.send_response(reply.status, reply.reason)
        for name, value in reply.getheaders():
            if name.lower() not in HOP_BY_HOP | {"content-length"}:
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def answer(self, status, body, content_type="text/plain"):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format, *args):
        pass


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("upstream", help="origin URL, such as http://127.0.0.1:8080/")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--fail-share", type=float, default=0.0, help="share of uploads to fail, 0 to 1")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds added to each upload")
    parser.add_argument("--stall", type=float, default=15.0, help="seconds a stalled request hangs")
    parser.add_argument("--outage", action="append", default=[], metavar="START:SECONDS")
    parser.add_argument("--methods", default="PUT,DELETE", help="methods that faults apply to")
    parser.add_argument("--paths", default="", help="regular expression for the paths faults apply to")
    parser.add_argument("--keep-host", action="store_true",
                        help="forward the client's Host header (a signed S3 request covers it)")
    args = parser.parse_args(argv)
    # A parent may start us with signals blocked (Foundation's Process does); SIGTERM must stop us.
    signal.pthread_sigmask(signal.SIG_SETMASK, [])

    server = http.server.ThreadingHTTPServer(("127.0.0.1", args.port), ProxyHandler)
    server.daemon_threads = True
    server.plan = FaultPlan(args)
    server.upstream = urllib.parse.urlsplit(args.upstream)
    server.latency = args.latency
    server.stall = args.stall
    server.keep_host = args.keep_host
    stop = lambda *_: threading.Thread(target=server.shutdown).start()  # noqa: E731
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print(f"proxy http://127.0.0.1:{server.server_address[1]}/", flush=True)
    server.serve_forever()
    server.server_close()
    print(json.dumps(server.plan.counts), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
