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
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nginx_process  # noqa: E402

REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHIPPED = os.path.join(REPOSITORY, "contrib", "nginx", "hlscap-cache.conf")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--upstream", type=int, required=True)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--logs")
    parser.add_argument("--nginx", default=shutil.which("nginx") or "/usr/sbin/nginx")
    args = parser.parse_args(argv)
    port = args.port or nginx_process.free_port()
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
    http = f"    access_log {logs}/access.log;\n    include {logs}/hlscap-cache.conf;"
    config = nginx_process.configuration(logs, http, connections=4096)
    return nginx_process.run(args.nginx, logs, config, port, f"edge http://127.0.0.1:{port}/ logs {logs}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
