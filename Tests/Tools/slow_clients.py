#!/usr/bin/env python3
"""Holds many slow connections open on an HTTP server (slowloris) and reports what the server did.

Usage: slow_clients.py HOST:PORT [--trickle N] [--silent M] [--hold SECONDS] [--pid PID]
                       [--play PATH] [--ready FILE] [--probe-timeout SECONDS]

N connections send a request header one byte a second and never finish it; M connections send
nothing. All are opened at once (the open-file limit is raised to its hard limit first), then held
for --hold seconds after the last one connected. Meanwhile:
  --play PATH   a player on a connection of its own fetches PATH (a master or media playlist), the
                first variant's media playlist, its init section and first two segments, each timed;
  --ready FILE  FILE is written when every connection is attached, for a test to start a player too;
  --pid PID     the server's open sockets are counted in /proc/PID/fd every 0.1 s.
Then every connection is closed and the time until the server answers PATH again is measured.

Prints one JSON line:
  {"trickle": {...}, "silent": {...}, "serverSockets": {"before", "max", "after"}, "play": {...},
   "recoverySeconds"}
where each kind reports "opened" (connected), "failed" (no connection within 5 s), "closed" (closed by
the server while held), "answered" (got bytes back) and "closedAfterSeconds" {"min", "median",
"max"} counted from each one's connect; "play" has "ok", "seconds" and "steps" [{path, status, bytes,
seconds}]. Exits 0 once it has run; the caller judges the figures.
"""
import argparse
import asyncio
import json
import os
import resource
import statistics
import sys
import time

CONNECT_SECONDS = 5
TRICKLE = b"GET /playlist.m3u8 HTTP/1.1\r\nHost: slow\r\nUser-Agent: slow_clients\r\nX-Slow: "


class Slow:
    """One held connection and what happened to it."""

    def __init__(self, kind):
        self.kind = kind
        self.opened_at = None
        self.closed_after = None
        self.answered = False
        self.failed = False
        self.writer = None


async def hold(host, port, slow):
    """Sends the kind's bytes until cancelled or until the server closes the connection."""
    try:
        reader, slow.writer = await asyncio.wait_for(asyncio.open_connection(host, port), CONNECT_SECONDS)
    except (OSError, asyncio.TimeoutError):
        slow.failed = True
        return
    slow.opened_at = time.monotonic()
    sent = 0
    while True:
        if slow.kind == "trickle":
            byte = TRICKLE[sent:sent + 1] or b"a"
            sent += 1
            try:
                slow.writer.write(byte)
            except OSError:
                pass
        try:
            data = await asyncio.wait_for(reader.read(4096), 1.0)
        except asyncio.TimeoutError:
            continue
        except OSError:
            data = b""
        if data:
            slow.answered = True
            continue
        slow.closed_after = time.monotonic() - slow.opened_at
        return


async def fetch(reader, writer, host, path):
    writer.write(f"GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
    await writer.drain()
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    fields = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:] if ":" in line)}
    body = await reader.readexactly(int(fields.get("content-length", "0")))
    return int(lines[0].split()[1]), body


def resolve(base, uri):
    return uri if uri.startswith("/") else base.rsplit("/", 1)[0] + "/" + uri


def first_uris(text):
    """The first variant (or None), the init section and the first two segments of a playlist."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    uris = [line for line in lines if not line.startswith("#")]
    if any(line.startswith("#EXT-X-STREAM-INF") for line in lines):
        return uris[0], None, []
    init = next((line.split('URI="', 1)[1].split('"', 1)[0] for line in lines if line.startswith("#EXT-X-MAP")), None)
    return None, init, uris[:2]


async def play(host, port, path, timeout):
    """Fetches what a player needs to start, on one kept-alive connection; every step timed."""
    steps, started = [], time.monotonic()

    async def step(target):
        began = time.monotonic()
        status, body = await fetch(reader, writer, host, target)
        steps.append({"path": target, "status": status, "bytes": len(body), "seconds": round(time.monotonic() - began, 3)})
        if status != 200:
            raise ValueError(f"{target}: {status}")
        return body

    writer = None
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout)
        playlist = path
        text = (await asyncio.wait_for(step(playlist), timeout)).decode()
        variant, init, segments = first_uris(text)
        if variant:
            playlist = resolve(playlist, variant)
            text = (await asyncio.wait_for(step(playlist), timeout)).decode()
            _, init, segments = first_uris(text)
        for uri in ([init] if init else []) + segments:
            await asyncio.wait_for(step(resolve(playlist, uri)), timeout)
        ok = bool(segments)
    except (OSError, ValueError, asyncio.TimeoutError, asyncio.IncompleteReadError) as error:
        steps.append({"error": repr(error)})
        ok = False
    finally:
        if writer:
            writer.close()
    return {"ok": ok, "seconds": round(time.monotonic() - started, 3), "steps": steps}


def server_sockets(pid):
    count = 0
    try:
        for name in os.listdir(f"/proc/{pid}/fd"):
            try:
                if os.readlink(f"/proc/{pid}/fd/{name}").startswith("socket:"):
                    count += 1
            except OSError:
                pass
    except OSError:
        return None
    return count


async def sample(pid, samples, stop):
    while not stop.is_set():
        count = server_sockets(pid)
        if count is not None:
            samples.append(count)
        await asyncio.sleep(0.1)


async def recover(host, port, path, seconds):
    """Seconds until PATH is answered 200 again, or None."""
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), 1)
            try:
                status, _ = await asyncio.wait_for(fetch(reader, writer, host, path), 1)
            finally:
                writer.close()
            if status == 200:
                return round(time.monotonic() - started, 3)
        except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError, ValueError):
            pass
        await asyncio.sleep(0.1)
    return None


def summary(slows):
    closed = sorted(slow.closed_after for slow in slows if slow.closed_after is not None)
    return {
        "opened": sum(slow.opened_at is not None for slow in slows),
        "failed": sum(slow.failed for slow in slows),
        "closed": len(closed),
        "answered": sum(slow.answered for slow in slows),
        "closedAfterSeconds": {"min": round(closed[0], 2), "median": round(statistics.median(closed), 2),
                               "max": round(closed[-1], 2)} if closed else None,
    }


async def run(args):
    host, port = args.address.rsplit(":", 1)
    port = int(port)
    slows = [Slow("trickle") for _ in range(args.trickle)] + [Slow("silent") for _ in range(args.silent)]
    stop_sampling, samples = asyncio.Event(), []
    before = server_sockets(args.pid) if args.pid else None
    sampler = asyncio.create_task(sample(args.pid, samples, stop_sampling)) if args.pid else None
    tasks = [asyncio.create_task(hold(host, port, slow)) for slow in slows]
    deadline = time.monotonic() + CONNECT_SECONDS + 1
    while time.monotonic() < deadline and any(slow.opened_at is None and not slow.failed for slow in slows):
        await asyncio.sleep(0.05)
    if args.ready:
        with open(args.ready, "w") as ready:
            ready.write(f"{sum(slow.opened_at is not None for slow in slows)}\n")
    attached = time.monotonic()
    played = await play(host, port, args.play, args.probe_timeout) if args.play else None
    await asyncio.sleep(max(0, args.hold - (time.monotonic() - attached)))
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    for slow in slows:
        if slow.writer is not None:
            slow.writer.close()
    recovery = await recover(host, port, args.play, 10) if args.play else None
    stop_sampling.set()
    if sampler:
        await sampler
    after = server_sockets(args.pid) if args.pid else None
    return {
        "trickle": summary([slow for slow in slows if slow.kind == "trickle"]),
        "silent": summary([slow for slow in slows if slow.kind == "silent"]),
        "serverSockets": {"before": before, "max": max(samples) if samples else None, "after": after},
        "play": played,
        "recoverySeconds": recovery,
    }


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("address")
    parser.add_argument("--trickle", type=int, default=0)
    parser.add_argument("--silent", type=int, default=0)
    parser.add_argument("--hold", type=float, default=10)
    parser.add_argument("--pid", type=int)
    parser.add_argument("--play")
    parser.add_argument("--ready")
    parser.add_argument("--probe-timeout", type=float, default=10)
    args = parser.parse_args(argv)
    # Every connection is a descriptor here too.
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    report = asyncio.run(run(args))
    print(json.dumps(report), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
