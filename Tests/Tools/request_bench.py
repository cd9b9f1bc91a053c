#!/usr/bin/env python3
"""Sends many small requests to a static HLS server and reports the server's CPU per 1,000 requests.

Usage: request_bench.py BASE_URL --pid PID [--requests N] [--connections C]

The requests cycle through what a player asks of a stream directory: the playlist, the I-frame
playlist, the init section and the first 64 KiB of each segment (a byte range), over C kept-alive
HTTP/1.1 connections on one asyncio loop. The server's CPU time is read from /proc/PID/stat (and
its threads) before and after. Prints one JSON line:
  {"requests", "errors", "seconds", "serverCpuSeconds", "cpuMsPer1000"}
"""
import argparse
import asyncio
import json
import os
import sys
import time
import urllib.parse
import urllib.request

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from load_clients import Connection  # noqa: E402


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as file:
        fields = file.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def targets(base):
    with urllib.request.urlopen(base + "playlist.m3u8") as reply:
        text = reply.read().decode()
    segments = [line for line in text.splitlines() if line and not line.startswith("#")]
    path = urllib.parse.urlsplit(base).path
    plain = [path + "playlist.m3u8", path + "iframes.m3u8", path + "init.mp4"]
    return plain + [(path + segment, "bytes=0-65535") for segment in segments]


async def worker(connection, queue, counts):
    while True:
        try:
            target = queue.pop()
        except IndexError:
            return
        if isinstance(target, tuple):
            path, byte_range = target
            status, _ = await connection.get_with(path, {"Range": byte_range})
        else:
            status, _ = await connection.get_with(target, {})
        counts["requests"] += 1
        if status not in (200, 206):
            counts["errors"] += 1


class RangeConnection(Connection):
    async def get_with(self, target, headers):
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        extra = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        self.writer.write(f"GET {target} HTTP/1.1\r\nHost: {self.host}\r\n{extra}\r\n".encode())
        await self.writer.drain()
        head = await self.reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        fields = {k.strip().lower(): v.strip() for k, v in (l.split(":", 1) for l in lines[1:] if ":" in l)}
        await self.reader.readexactly(int(fields.get("content-length", "0")))
        if fields.get("connection", "").lower() == "close":
            self.close()
        return int(lines[0].split()[1]), None


async def run(base, requests, connections):
    parts = urllib.parse.urlsplit(base)
    cycle = targets(base)
    queue = [cycle[index % len(cycle)] for index in range(requests)]
    counts = {"requests": 0, "errors": 0}
    clients = [RangeConnection(parts.hostname, parts.port) for _ in range(connections)]
    await asyncio.gather(*(worker(client, queue, counts) for client in clients))
    for client in clients:
        client.close()
    return counts


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base")
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("--requests", type=int, default=20000)
    parser.add_argument("--connections", type=int, default=50)
    args = parser.parse_args(argv)
    base = args.base if args.base.endswith("/") else args.base + "/"
    before, started = cpu_seconds(args.pid), time.monotonic()
    counts = asyncio.run(run(base, args.requests, args.connections))
    seconds, cpu = time.monotonic() - started, cpu_seconds(args.pid) - before
    print(json.dumps({**counts, "seconds": round(seconds, 2), "serverCpuSeconds": round(cpu, 3),
                      "cpuMsPer1000": round(cpu * 1000 / max(1, counts["requests"]) * 1000, 2)}))
    return 0 if counts["errors"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
