#!/usr/bin/env python3
"""Many LL-HLS clients at once: each follows the stream with blocking playlist reloads and part GETs.

Usage: load_clients.py URL [--clients N] [--seconds S]

Every client keeps one HTTP/1.1 connection and loops: a blocking reload for the hinted part
(_HLS_msn/_HLS_part), then a GET of that part. All clients run on one asyncio loop, so answers are
timed without thread scheduling in between. A part's availability is the earliest moment any
client got the reload that lists it; each client's wait after availability is its own answer's
time minus that. Prints one JSON line:
  {"clients", "requests", "errors", "parts", "waitAfterAvailabilityMs": {"p50", "p99", "max"}}
Exit 0 when no request failed, 1 otherwise.
"""
import argparse
import asyncio
import json
import re
import sys
import time
import urllib.parse

sys.dont_write_bytecode = True

HINT = re.compile(rb'#EXT-X-PRELOAD-HINT:TYPE=PART,URI="([^"]+)"')
POSITION = re.compile(r"(\d{6})\.(\d+)\.m4s$")


class Connection:
    def __init__(self, host, port):
        self.host, self.port = host, port
        self.reader = self.writer = None

    async def get(self, target):
        """(status, body) over the kept-alive connection, reconnecting when the server closed it."""
        for attempt in range(2):
            if self.writer is None:
                self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
            try:
                self.writer.write(f"GET {target} HTTP/1.1\r\nHost: {self.host}\r\n\r\n".encode())
                await self.writer.drain()
                head = await self.reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                status = int(lines[0].split()[1])
                headers = {k.strip().lower(): v.strip() for k, v in (l.split(":", 1) for l in lines[1:] if ":" in l)}
                body = await self.reader.readexactly(int(headers.get("content-length", "0")))
                if headers.get("connection", "").lower() == "close":
                    self.close()
                return status, body
            except (asyncio.IncompleteReadError, ConnectionError):
                self.close()
                if attempt == 1:
                    raise
        raise ConnectionError("unreachable")

    def close(self):
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


async def client(url, deadline, availability, arrivals, counts, errors):
    parts = urllib.parse.urlsplit(url)
    connection = Connection(parts.hostname, parts.port or 80)
    base = parts.path.rsplit("/", 1)[0] + "/"
    try:
        status, body = await connection.get(parts.path)
        while time.monotonic() < deadline:
            match = HINT.search(body)
            if status != 200 or not match:
                errors.append(f"playlist answered {status}")
                return
            hint = match.group(1).decode()
            msn, part = POSITION.search(hint).groups()
            status, body = await connection.get(f"{parts.path}?_HLS_msn={int(msn)}&_HLS_part={int(part)}")
            answered = time.monotonic()
            counts["requests"] += 1
            if status != 200:
                errors.append(f"blocking reload for {hint} answered {status}")
                return
            availability[hint] = min(availability.get(hint, answered), answered)
            arrivals.append((hint, answered))
            part_status, part_body = await connection.get(base + hint)
            counts["requests"] += 1
            if part_status != 200 or not part_body:
                errors.append(f"{hint} answered {part_status}")
                return
    except (OSError, asyncio.IncompleteReadError) as error:
        errors.append(f"connection: {error}")
    finally:
        connection.close()


async def run(url, clients, seconds):
    deadline = time.monotonic() + seconds
    availability, arrivals, errors = {}, [], []
    counts = {"requests": 0}
    await asyncio.gather(*(client(url, deadline, availability, arrivals, counts, errors) for _ in range(clients)))
    waits = sorted((answered - availability[hint]) * 1000 for hint, answered in arrivals)

    def quantile(fraction):
        return round(waits[min(len(waits) - 1, int(len(waits) * fraction))], 1) if waits else None

    return {"clients": clients, "requests": counts["requests"], "errors": len(errors), "firstErrors": errors[:5],
            "parts": len(availability),
            "waitAfterAvailabilityMs": {"p50": quantile(0.5), "p99": quantile(0.99), "max": quantile(1.0)}}


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url")
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=60)
    args = parser.parse_args(argv)
    report = asyncio.run(run(args.url, args.clients, args.seconds))
    print(json.dumps(report))
    return 0 if report["errors"] == 0 and report["parts"] > 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
