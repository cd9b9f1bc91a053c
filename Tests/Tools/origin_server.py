#!/usr/bin/env python3
"""Runs nginx as a WebDAV-style HLS origin on loopback: PUT and DELETE store and remove files,
GET serves them back.

Usage: origin_server.py ROOT [--port PORT] [--logs DIR]    (PORT 0 or omitted: a free port)

nginx runs in the foreground as one process with a generated configuration; its
configuration, logs (access.log with request times) and pid file go to DIR, or to a
temporary directory removed at the end. The player page of serve.py is stored at serve.PLAYER_PATH under ROOT, so
chromium_play.py --url can play a stream from this origin. Prints
"origin http://127.0.0.1:PORT/ logs DIR" once nginx accepts connections, and stops nginx
on SIGTERM, SIGINT or when nginx exits.
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
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import serve  # noqa: E402

STARTUP_SECONDS = 10
POLL_SECONDS = 0.05

# master_process off: one process that runs as the invoking user and stops with it.
# Request bodies are buffered next to ROOT so that nginx renames them into place: a reader
# never sees a partly written file.
CONFIG = """\
daemon off;
master_process off;
worker_processes 1;
pid {logs}/nginx.pid;
error_log {logs}/error.log warn;
events {{ worker_connections 512; }}
http {{
    types {{
        application/vnd.apple.mpegurl m3u8;
        video/iso.segment m4s;
        video/mp4 mp4;
        text/html html;
    }}
    default_type application/octet-stream;
    log_format timed '$msec $request_method $uri $status $request_length $request_time';
    access_log {logs}/access.log timed;
    client_body_temp_path {body};
    proxy_temp_path {logs}/proxy;
    fastcgi_temp_path {logs}/fastcgi;
    uwsgi_temp_path {logs}/uwsgi;
    scgi_temp_path {logs}/scgi;
    client_max_body_size 0;
    server {{
        listen 127.0.0.1:{port};
        root {root};
        location / {{
            dav_methods PUT DELETE;
            create_full_put_path on;
            dav_access user:rw group:r all:r;
            add_header Access-Control-Allow-Origin *;
        }}
    }}
}}
"""


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_until_listening(port, process):
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return False
        try:
            socket.create_connection(("127.0.0.1", port), timeout=POLL_SECONDS).close()
            return True
        except OSError:
            time.sleep(POLL_SECONDS)
    return False


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--logs", help="directory for nginx's configuration and logs (kept)")
    parser.add_argument("--nginx", default=shutil.which("nginx") or "/usr/sbin/nginx")
    args = parser.parse_args(argv)
    # A parent may start us with signals blocked (Foundation's Process does); SIGTERM must stop us.
    signal.pthread_sigmask(signal.SIG_SETMASK, [])

    root = os.path.abspath(args.root)
    os.makedirs(root, exist_ok=True)
    with open(os.path.join(root, serve.PLAYER_PATH.lstrip("/")), "wb") as page:
        page.write(serve.PLAYER_PAGE)
    logs = os.path.abspath(args.logs) if args.logs else tempfile.mkdtemp(prefix="origin-nginx-")
    os.makedirs(logs, exist_ok=True)
    # Same file system as ROOT, so that a finished upload is a rename.
    body = tempfile.mkdtemp(prefix=".origin-body-", dir=os.path.dirname(root))
    port = args.port or free_port()
    config_path = os.path.join(logs, "nginx.conf")
    with open(config_path, "w") as config:
        config.write(CONFIG.format(logs=logs, body=body, port=port, root=root))

    process = subprocess.Popen([args.nginx, "-p", logs, "-e", os.path.join(logs, "error.log"), "-c", config_path])
    stop = lambda *_: process.terminate()  # noqa: E731
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        if not wait_until_listening(port, process):
            with open(os.path.join(logs, "error.log")) as log:
                print(f"nginx did not start:\n{log.read()}", file=sys.stderr)
            return 2
        print(f"origin http://127.0.0.1:{port}/ logs {logs}", flush=True)
        return process.wait()
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait()
        shutil.rmtree(body, ignore_errors=True)
        if not args.logs:
            shutil.rmtree(logs, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
