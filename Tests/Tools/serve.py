#!/usr/bin/env python3
"""Loopback HTTP server for an HLS output directory.

Usage: serve.py DIR [PORT]     (PORT 0 or omitted picks a free port)

Serves DIR on 127.0.0.1 with the MIME types HLS players expect, a CORS header, and
no-cache playlists (a live playlist changes; media files never do). It also serves a
small player page at PLAYER_PATH, from the same origin as the stream, so a browser can
load the playlist in a <video> element. Prints "serving http://127.0.0.1:PORT/" once
the socket is listening.
"""
import functools
import http.server
import sys
import threading

PLAYER_PATH = "/__player.html"

MIME_TYPES = {
    ".m3u8": "application/vnd.apple.mpegurl",
    ".m4s": "video/iso.segment",
    ".mp4": "video/mp4",
    ".m4a": "audio/mp4",
    ".ts": "video/mp2t",
    ".html": "text/html; charset=utf-8",
}

# The page plays the playlist named in ?src= with native HLS (no hls.js) at ?rate= speed:
# muted, so that autoplay needs no user gesture; a playlist on another origin with CORS.
PLAYER_PAGE = b"""<!doctype html>
<html><head><meta charset="utf-8"><title>hlscap player</title></head>
<body style="margin:0;background:#000">
<video id="video" muted autoplay playsinline controls style="width:100%"></video>
<script>
  const video = document.getElementById("video");
  const params = new URLSearchParams(location.search);
  video.defaultPlaybackRate = Number(params.get("rate") || 1);
  const src = params.get("src") || "playlist.m3u8";
  // A stream on another origin is fetched with CORS: Chromium does not read byte ranges of opaque
  // (no-cors) answers, which a playlist of EXT-X-BYTERANGE segments needs.
  if (new URL(src, location.href).origin !== location.origin) video.crossOrigin = "anonymous";
  video.src = src;
</script>
</body></html>
"""


class HLSRequestHandler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, **MIME_TYPES}

    def do_GET(self):
        if self.path.split("?", 1)[0] == PLAYER_PATH:
            self.send_response(200)
            self.send_header("Content-Type", MIME_TYPES[".html"])
            self.send_header("Content-Length", str(len(PLAYER_PAGE)))
            self.end_headers()
            self.wfile.write(PLAYER_PAGE)
            return
        super().do_GET()

    def end_headers(self):
        self.send_header("Access-Control-Allow-Origin", "*")
        if self.path.split("?", 1)[0].endswith(".m3u8"):
            self.send_header("Cache-Control", "no-cache")
        super().end_headers()

    def log_message(self, format, *args):
        # Request logs would drown the checkers' one-line reports.
        pass


def make_server(directory, port=0):
    """Returns a ThreadingHTTPServer for `directory` on 127.0.0.1 (port 0: a free one)."""
    handler = functools.partial(HLSRequestHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    server.daemon_threads = True
    return server


def start_in_background(directory, port=0):
    """Starts a server on a daemon thread; returns it (call .shutdown() to stop)."""
    server = make_server(directory, port)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main(argv):
    if len(argv) not in (2, 3):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 64
    server = make_server(argv[1], int(argv[2]) if len(argv) == 3 else 0)
    print(f"serving http://127.0.0.1:{server.server_address[1]}/", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
