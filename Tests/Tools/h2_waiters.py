#!/usr/bin/python3
"""Many viewers waiting on one Low-Latency HLS part over HTTP/2: how soon each is answered once the
part exists, and what the waiting costs the server in memory.

Usage: h2_waiters.py PLAYLIST-URL [--connections N] [--streams M] [--pid PID]

Opens N TLS connections that negotiate `h2` (Python's h2), reads the playlist once for its preload
hint (`part/000042.3.m4s`: segment 42, part 3), then sends on each M blocking reloads of the playlist
for the first part of the next segment (`_HLS_msn=43&_HLS_part=0`), so N x M requests wait on the
same part. An answer's time is when its last bytes were read from the socket; the delay of each is
from the earliest answer (the part's completion as the fastest viewer saw it). With --pid, the
server's resident memory is read with the connections open before the requests, and again while
all wait.

Prints one JSON line: {"connections", "streams", "requests", "answered", "ok" (status 200 naming
the part), "p50Milliseconds", "p99Milliseconds", "maxMilliseconds", "waitSeconds" (from the last
request sent to the earliest answer), "rssKB": [connected, waiting] or null, "bytesPerWaitingRequest"}.
Exit status 2 when the server cannot be reached over h2.
"""
import argparse
import json
import re
import selectors
import socket
import ssl
import sys
import time
import urllib.parse

import h2.config
import h2.connection
import h2.events

from h2_hostile import rss_kb


def tls_context():
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    context.set_alpn_protocols(["h2"])
    return context


def fetch_once(host, port, path):
    """One GET over its own h2 connection: the body as text."""
    sock = tls_context().wrap_socket(socket.create_connection((host, port), timeout=10), server_hostname=host)
    connection = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    connection.initiate_connection()
    stream = connection.get_next_available_stream_id()
    connection.send_headers(stream, [(":method", "GET"), (":path", path), (":scheme", "https"),
                                     (":authority", f"{host}:{port}")], end_stream=True)
    sock.sendall(connection.data_to_send())
    body = b""
    while True:
        data = sock.recv(65536)
        if not data:
            raise RuntimeError("the server closed the connection")
        for event in connection.receive_data(data):
            if isinstance(event, h2.events.DataReceived):
                body += event.data
                connection.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            elif isinstance(event, h2.events.StreamEnded):
                sock.close()
                return body.decode()
        sock.sendall(connection.data_to_send())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("--connections", type=int, default=100)
    parser.add_argument("--streams", type=int, default=10)
    parser.add_argument("--pid", type=int)
    options = parser.parse_args()
    url = urllib.parse.urlsplit(options.url)
    host, port, path = url.hostname, url.port or 443, url.path

    try:
        connections = []
        for _ in range(options.connections):
            sock = tls_context().wrap_socket(socket.create_connection((host, port), timeout=10), server_hostname=host)
            if sock.selected_alpn_protocol() != "h2":
                raise RuntimeError(f"ALPN chose {sock.selected_alpn_protocol()!r}, not h2")
            connection = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
            connection.initiate_connection()
            sock.sendall(connection.data_to_send())
            connections.append((sock, connection))
        time.sleep(0.5)  # the server settles on the open connections
        rss_connected = rss_kb(options.pid)
        # Read once the connections are open (opening them takes a while): the part is still ahead.
        playlist = fetch_once(host, port, path)
    except (OSError, RuntimeError) as error:
        print(f"h2_waiters: {error}", file=sys.stderr)
        return 2
    hint = re.search(r'#EXT-X-PRELOAD-HINT:TYPE=PART,URI="[^"]*?(\d+)\.(\d+)\.m4s"', playlist)
    if not hint:
        print("h2_waiters: the playlist has no part hint (is it --low-latency?)", file=sys.stderr)
        return 2
    msn = int(hint.group(1)) + 1
    part_name = f"{msn:06d}.0.m4s"

    selector = selectors.DefaultSelector()
    bodies, answered, statuses = {}, {}, {}
    for index, (sock, connection) in enumerate(connections):
        for _ in range(options.streams):
            stream = connection.get_next_available_stream_id()
            connection.send_headers(stream, [(":method", "GET"), (":path", f"{path}?_HLS_msn={msn}&_HLS_part=0"),
                                             (":scheme", "https"), (":authority", f"{host}:{port}")], end_stream=True)
            bodies[(index, stream)] = b""
        sock.sendall(connection.data_to_send())
        sock.setblocking(False)
        selector.register(sock, selectors.EVENT_READ, index)
    sent = time.monotonic()
    requests = len(bodies)
    rss_waiting = None
    deadline = sent + 15
    while len(answered) < requests and time.monotonic() < deadline:
        if rss_waiting is None and time.monotonic() - sent > 0.3 and not answered:
            rss_waiting = rss_kb(options.pid)
        for key, _ in selector.select(timeout=0.01):
            index = key.data
            sock, connection = connections[index]
            # Everything the socket and TLS hold now, so that no answer waits for the next select.
            while True:
                try:
                    data = sock.recv(262144)
                except (ssl.SSLWantReadError, BlockingIOError):
                    break
                now = time.monotonic()
                if not data:
                    selector.unregister(sock)
                    break
                for event in connection.receive_data(data):
                    if isinstance(event, h2.events.ResponseReceived):
                        statuses[(index, event.stream_id)] = dict(event.headers).get(b":status", b"").decode()
                    elif isinstance(event, h2.events.DataReceived):
                        bodies[(index, event.stream_id)] += event.data
                        connection.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                    elif isinstance(event, h2.events.StreamEnded):
                        answered[(index, event.stream_id)] = now
            pending = connection.data_to_send()
            if pending:
                sock.setblocking(True)
                sock.sendall(pending)
                sock.setblocking(False)
    for sock, _ in connections:
        sock.close()

    ok = sum(1 for key in answered if statuses.get(key) == "200" and part_name.encode() in bodies[key])
    first = min(answered.values()) if answered else sent
    delays = sorted((moment - first) * 1000 for moment in answered.values())

    def quantile(fraction):
        return round(delays[min(len(delays) - 1, int(fraction * len(delays)))], 1) if delays else None

    waiting = [rss_connected, rss_waiting] if options.pid else None
    per_request = (round((rss_waiting - rss_connected) * 1024 / requests)
                   if options.pid and rss_waiting is not None and rss_connected is not None else None)
    print(json.dumps({"connections": options.connections, "streams": options.streams, "requests": requests,
                      "answered": len(answered), "ok": ok, "p50Milliseconds": quantile(0.5),
                      "p99Milliseconds": quantile(0.99), "maxMilliseconds": round(delays[-1], 1) if delays else None,
                      "waitSeconds": round(first - sent, 3), "rssKB": waiting,
                      "bytesPerWaitingRequest": per_request}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
