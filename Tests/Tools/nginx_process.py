"""nginx in the foreground, as one process on a generated configuration, for the test tools that
need a real HTTP server: origin_server.py (a WebDAV origin) and cdn_edge.py (a caching edge).

master_process off: one process that runs as the invoking user and stops with it, even when the tool
is killed before it can stop nginx (a test's SIGKILL): nginx gets SIGTERM when its parent dies. Every
path nginx writes to (pid, logs, temporary files) is under the tool's log directory.
"""
import ctypes
import os
import signal
import socket
import subprocess
import sys
import time

STARTUP_SECONDS = 10
POLL_SECONDS = 0.05

MAIN = """\
daemon off;
master_process off;
worker_processes 1;
pid {logs}/nginx.pid;
error_log {logs}/error.log warn;
events {{ worker_connections {connections}; }}
http {{
    client_body_temp_path {body};
    proxy_temp_path {logs}/proxy;
    fastcgi_temp_path {logs}/fastcgi;
    uwsgi_temp_path {logs}/uwsgi;
    scgi_temp_path {logs}/scgi;
{http}
}}
"""


PR_SET_PDEATHSIG = 1


def _stop_with_parent(parent):
    """In the child before exec: SIGTERM when the parent dies, and at once if it already has."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:
        os.kill(os.getpid(), signal.SIGTERM)


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def configuration(logs, http, connections=512, body=None):
    """The whole nginx.conf: `http` is what goes inside the http block besides the temporary paths."""
    return MAIN.format(logs=logs, connections=connections, body=body or os.path.join(logs, "body"), http=http)


def run(nginx, logs, config_text, port, announcement):
    """Writes the configuration to LOGS/nginx.conf, starts nginx, prints `announcement` once it
    accepts connections on `port`, and returns its exit status when it stops (SIGTERM or SIGINT to
    this process stop it). Returns 2 if it did not start, with its error log on stderr."""
    # A parent may start us with signals blocked (Foundation's Process does); SIGTERM must stop us.
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    config_path = os.path.join(logs, "nginx.conf")
    with open(config_path, "w") as config:
        config.write(config_text)
    parent = os.getpid()
    process = subprocess.Popen([nginx, "-p", logs, "-e", os.path.join(logs, "error.log"), "-c", config_path],
                               preexec_fn=lambda: _stop_with_parent(parent))
    signal.signal(signal.SIGTERM, lambda *_: process.terminate())
    signal.signal(signal.SIGINT, lambda *_: process.terminate())
    try:
        if not _wait_until_listening(port, process):
            with open(os.path.join(logs, "error.log")) as log:
                print(f"nginx did not start:\n{log.read()}", file=sys.stderr)
            return 2
        print(announcement, flush=True)
        return process.wait()
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait()


def _wait_until_listening(port, process):
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
