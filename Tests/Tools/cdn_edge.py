#!/usr/bin/env python3
"""Runs nginx with the repository's CDN configuration (contrib/nginx/hlscap-cache.conf) in front of
an hlscap server, on loopback ports, until SIGTERM or SIGINT.

Usage: cdn_edge.py --upstream PORT [--port PORT] [--logs DIR]

The shipped server block is used as it is, with only its two ports and its cache directory
changed. Prints "edge http://127.0.0.1:PORT/ logs DIR" once nginx accepts connections.
"""
import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True

REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHIPPED = os.path.join(REPOSITORY, "contrib", "nginx", "hlscap-cache.conf")

MAIN = """\
daemon off;
master_process off;
worker_processes 1;
pid {logs}/nginx.pid;
error_log {logs}/error.log warn;
events {{ worker_connections 4096; }}
http {{
    access_log {logs}/access.log;
    proxy_temp_path {logs}/proxy;
    client_body_temp_path {logs}/body;
    fastcgi_temp_path {logs}/fastcgi;
    uwsgi_temp_path {logs}/uwsgi;
    scgi_temp_path {logs}/scgi;
    include {logs}/hlscap-cache.conf;
}}
"""


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--upstream", type=int, required=True)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--logs")
    parser.add_argument("--nginx", default=shutil.which("nginx") or "/usr/sbin/nginx")
    args = parser.parse_args(argv)
    port = args.port or free_port()
    logs = os.path.abspath(args.logs) if args.logs else tempfile.mkdtemp(prefix="cdn-edge-")
    os.makedirs(logs, exist_ok=True)
    with open(SHIPPED) as file:
        shipped = file.read()
    for old, new in [("127.0.0.1:8080", f"127.0.0.1:{args.upstream}"), ("listen 8081", f"listen 127.0.0.1:{port}"),
                     ("/var/cache/nginx/hlscap", os.path.join(logs, "cache"))]:
        if old not in shipped:
            print(f"cdn_edge: {SHIPPED} no longer holds {old!r}", file=sys.stderr)
            return 2
        shipped = shipped.replace(old, new)
    with open(os.path.join(logs, "hlscap-cache.conf"), "w") as file:
        file.write(shipped)
    config = os.path.join(logs, "nginx.conf")
    with open(config, "w") as file:
        file.write(MAIN.format(logs=logs))
    process = subprocess.Popen([args.nginx, "-p", logs, "-e", os.path.join(logs, "error.log"), "-c", config])
    signal.signal(signal.SIGTERM, lambda *_: process.terminate())
    signal.signal(signal.SIGINT, lambda *_: process.terminate())
    deadline = time.monotonic() + 10
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                with open(os.path.join(logs, "error.log")) as log:
                    print(f"nginx did not start:\n{log.read()}", file=sys.stderr)
                process.kill()
                return 2
            time.sleep(0.05)
    print(f"edge http://127.0.0.1:{port}/ logs {logs}", flush=True)
    return process.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
