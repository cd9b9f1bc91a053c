#!/usr/bin/env python3
"""Runs nginx as a WebDAV-style HLS origin on loopback: PUT and DELETE store and remove files,
GET serves them back.

Usage: origin_server.py ROOT [--port PORT] [--logs DIR]    (PORT 0 or omitted: a free port)
       origin_server.py ROOT --static [--tls-cert PEM --tls-key PEM] [--logs DIR]

With --static, nginx only serves ROOT, configured as for static files in production (sendfile, no
access log, connections kept alive as long as the client likes, playlists gzipped for clients that
take it), to be measured against; with --tls-cert and --tls-key it also serves HTTPS (TLS 1.2 and
1.3, HTTP/2 by ALPN) on a second free port, announced on a second line "origin-tls https://127.0.0.1:PORT/".

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
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nginx_process  # noqa: E402
import serve  # noqa: E402

# Request bodies are buffered next to ROOT so that nginx renames them into place: a reader
# never sees a partly written file.
HTTP = """\
    types {{
        application/vnd.apple.mpegurl m3u8;
        video/iso.segment m4s;
        video/mp4 mp4;
        text/html html;
    }}
    default_type application/octet-stream;
    log_format timed '$msec $request_method $uri $status $request_length $request_time';
    access_log {logs}/access.log timed;
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
    }}"""

STATIC = """\
    types {{
        application/vnd.apple.mpegurl m3u8;
        video/iso.segment m4s;
        video/mp4 mp4;
    }}
    default_type application/octet-stream;
    access_log off;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 1000000;
    gzip on;
    gzip_types application/vnd.apple.mpegurl;
    server {{
        listen 127.0.0.1:{port};
{tls}        root {root};
    }}"""

TLS = """\
        listen 127.0.0.1:{port} ssl http2;
        ssl_certificate {certificate};
        ssl_certificate_key {key};
        ssl_protocols TLSv1.2 TLSv1.3;
"""


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--logs", help="directory for nginx's configuration and logs (kept)")
    parser.add_argument("--nginx", default=shutil.which("nginx") or "/usr/sbin/nginx")
    parser.add_argument("--static", action="store_true", help="serve ROOT only, tuned for static files")
    parser.add_argument("--tls-cert")
    parser.add_argument("--tls-key")
    args = parser.parse_args(argv)
    if (args.tls_cert is None) != (args.tls_key is None) or (args.tls_cert and not args.static):
        parser.error("--tls-cert and --tls-key go together, with --static")
    root = os.path.abspath(args.root)
    os.makedirs(root, exist_ok=True)
    with open(os.path.join(root, serve.PLAYER_PATH.lstrip("/")), "wb") as page:
        page.write(serve.PLAYER_PAGE)
    logs = os.path.abspath(args.logs) if args.logs else tempfile.mkdtemp(prefix="origin-nginx-")
    os.makedirs(logs, exist_ok=True)
    # Same file system as ROOT, so that a finished upload is a rename.
    body = tempfile.mkdtemp(prefix=".origin-body-", dir=os.path.dirname(root))
    port = args.port or nginx_process.free_port()
    announcement = f"origin http://127.0.0.1:{port}/ logs {logs}"
    if args.static:
        tls = ""
        if args.tls_cert:
            tls_port = nginx_process.free_port()
            tls = TLS.format(port=tls_port, certificate=os.path.abspath(args.tls_cert), key=os.path.abspath(args.tls_key))
            announcement += f"\norigin-tls https://127.0.0.1:{tls_port}/"
        http = STATIC.format(port=port, tls=tls, root=root)
    else:
        http = HTTP.format(logs=logs, port=port, root=root)
    config = nginx_process.configuration(logs, http, body=body)
    try:
        return nginx_process.run(args.nginx, logs, config, port, announcement)
    finally:
        shutil.rmtree(body, ignore_errors=True)
        if not args.logs:
            shutil.rmtree(logs, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
