#!/usr/bin/env python3
"""Plays an HLS stream in headless Chromium with native HLS and reports what happened.

Usage: chromium_play.py (--url URL | --dir DIR) [--playlist NAME] [--timeout S] [--live]
                        [--live-seconds S] [--rate R] [--throttle-kbps K] [--open-playlist]
                        [--media-log] [--chromium PATH]

--url names a playlist on a server that also serves serve.PLAYER_PATH (serve.py does), or
whose player page --player-page names (a copy of serve.PLAYER_PAGE in an object store's bucket);
--dir serves DIR with serve.py on a free loopback port and plays DIR/playlist.m3u8.
Chromium is driven over the DevTools protocol, spoken over a standard-library WebSocket.
Debian's Chromium 156 plays HLS natively in <video src=...m3u8> without any feature flag.
Prints one JSON line:
  {"played", "ended", "currentTime", "duration", "error", "videoWidth", ...}
Exit 0 when the video played to its end (VOD: ended, and currentTime >= duration - 0.5 for
both the element's duration and the sum of the playlist's EXTINF values, since Chromium
shortens its duration to what it could parse when a segment is truncated), 1 otherwise, 2 when
the playlist, Chromium or the DevTools connection could not be reached.
--live: the playlist is read along with the player, and playback passes when it followed the
growing playlist: currentTime advanced --live-seconds without an error, by more than the
media the playlist listed when playback began, and the playlist gained segments meanwhile.
The report adds "playedSeconds", "listedAtStart" (seconds) and "segmentsAdded".
--playlist plays DIR/NAME instead of playlist.m3u8, such as a master playlist; durations and
sequence numbers are then read from its first variant. --throttle-kbps limits Chromium's network
to K kb/s (DevTools network emulation) from the start. The report always lists "sizes": every
picture size shown, in order, with the media time it first appeared at, and "playedAfterSwitch":
the media seconds played after the last change of size.
--open-playlist opens the playlist itself instead of a player page: Chromium shows it in its own
media document (a <video> of the playlist's own origin). --media-log adds "mediaErrors": what
Chromium's media pipeline reported as errors (DevTools Media domain: the demuxer's or decoder's
own complaint, which the element's error code only summarises).
"""
import argparse
import base64
import contextlib
import hashlib
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

# Keep the source tree free of __pycache__ directories.
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import serve  # noqa: E402

CHROMIUM_FLAGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--autoplay-policy=no-user-gesture-required",
    "--remote-debugging-port=0",
    "--no-first-run",
    "--no-default-browser-check",
    "--mute-audio",
]
STARTUP_SECONDS = 30
# Under DevTools network emulation Chromium's native player once reported a segment it could not
# parse, in a stream that played in every other run and decodes in ffmpeg and GStreamer. A throttled
# run that ends so gets one more attempt; a stream that is really broken fails both. The report's
# "attempts" says how many it took.
THROTTLED_RETRY_SIGNATURE = "DEMUXER_ERROR_COULD_NOT_PARSE"
THROTTLED_ATTEMPTS = 2
POLL_SECONDS = 0.25
MEDIA_LOG_SETTLE_SECONDS = 1.0
END_TOLERANCE_SECONDS = 0.5
EXTINF = "#EXTINF:"
MEDIA_SEQUENCE = "#EXT-X-MEDIA-SEQUENCE:"
# Media plays faster than real time so end-to-end tests stay short; Chromium honours
# playbackRate for native HLS (audio is time-stretched, video frames are dropped as needed).
DEFAULT_VOD_RATE = 4.0

STATE_EXPRESSION = """(() => {
  const v = document.querySelector("video");
  if (!v) return JSON.stringify({missing: true});
  const finite = x => Number.isFinite(x) ? x : null;
  return JSON.stringify({
    currentTime: v.currentTime, duration: finite(v.duration), ended: v.ended,
    paused: v.paused, readyState: v.readyState, networkState: v.networkState,
    videoWidth: v.videoWidth, videoHeight: v.videoHeight, playbackRate: v.playbackRate,
    error: v.error ? {code: v.error.code, message: v.error.message} : null,
  });
})()"""


class SetupError(Exception):
    """Chromium or the DevTools connection could not be brought up."""


class WebSocket:
    """Minimal RFC 6455 client: text frames, client masking, no extensions."""

    OP_CONTINUATION, OP_TEXT, OP_BINARY, OP_CLOSE, OP_PING, OP_PONG = 0x0, 0x1, 0x2, 0x8, 0x9, 0xA
    FIN = 0x80
    MASKED = 0x80
    LENGTH_16, LENGTH_64 = 126, 127
    HANDSHAKE_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    def __init__(self, url, timeout):
        parts = urllib.parse.urlsplit(url)
        self.sock = socket.create_connection((parts.hostname, parts.port), timeout=timeout)
        self.buffer = b""
        key = base64.b64encode(os.urandom(16)).decode()
        request = (
            f"GET {parts.path or '/'} HTTP/1.1\r\nHost: {parts.netloc}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        )
        self.sock.sendall(request.encode())
        header = self._read_until(b"\r\n\r\n").decode("latin-1")
        if " 101 " not in header.split("\r\n", 1)[0]:
            raise SetupError(f"WebSocket upgrade refused: {header.splitlines()[0]}")
        expected = base64.b64encode(hashlib.sha1((key + self.HANDSHAKE_GUID).encode()).digest()).decode()
        if expected not in header:
            raise SetupError("WebSocket upgrade answered with a wrong Sec-WebSocket-Accept")

    def _read_until(self, marker):
        while marker not in self.buffer:
            self._fill()
        head, self.buffer = self.buffer.split(marker, 1)
        return head

    def _read_exactly(self, count):
        while len(self.buffer) < count:
            self._fill()
        data, self.buffer = self.buffer[:count], self.buffer[count:]
        return data

    def _fill(self):
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionError("WebSocket closed by peer")
        self.buffer += chunk

    def send_frame(self, opcode, payload):
        header = bytes([self.FIN | opcode])
        length = len(payload)
        if length < self.LENGTH_16:
            header += bytes([self.MASKED | length])
        elif length < 1 << 16:
            header += bytes([self.MASKED | self.LENGTH_16]) + struct.pack("!H", length)
        else:
            header += bytes([self.MASKED | self.LENGTH_64]) + struct.pack("!Q", length)
        mask = os.urandom(4)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.sock.sendall(header + mask + masked)

    def send_text(self, text):
        self.send_frame(self.OP_TEXT, text.encode())

    def receive_text(self):
        """Returns the next text message, answering pings and joining fragments."""
        message = b""
        while True:
            first, second = self._read_exactly(2)
            opcode, length = first & 0x0F, second & 0x7F
            if length == self.LENGTH_16:
                (length,) = struct.unpack("!H", self._read_exactly(2))
            elif length == self.LENGTH_64:
                (length,) = struct.unpack("!Q", self._read_exactly(8))
            mask = self._read_exactly(4) if second & self.MASKED else None
            payload = self._read_exactly(length)
            if mask:
                payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
            if opcode == self.OP_PING:
                self.send_frame(self.OP_PONG, payload)
            elif opcode == self.OP_CLOSE:
                raise ConnectionError("WebSocket closed by peer")
            elif opcode in (self.OP_TEXT, self.OP_CONTINUATION, self.OP_BINARY):
                message += payload
                if first & self.FIN:
                    return message.decode()

    def close(self):
        try:
            self.send_frame(self.OP_CLOSE, b"")
        except OSError:
            pass
        self.sock.close()


class DevTools:
    """Request/response calls on one page target; events are read and dropped, except those of the
    domains named in `kept_domains`, which are appended to `events`."""

    def __init__(self, websocket):
        self.websocket = websocket
        self.next_id = 0
        self.kept_domains = ()
        self.events = []

    def call(self, method, **params):
        self.next_id += 1
        self.websocket.send_text(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.websocket.receive_text())
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise SetupError(f"{method}: {message['error']}")
                return message["result"]
            if message.get("method", "").split(".", 1)[0] in self.kept_domains:
                self.events.append(message)

    def evaluate(self, expression):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        return result["result"].get("value")


class Chromium:
    """A headless Chromium in its own process group, always killed on exit."""

    def __init__(self, executable, extra_flags=()):
        self.profile = tempfile.mkdtemp(prefix="chromium-play-")
        self.log = open(os.path.join(self.profile, "chromium.log"), "wb")
        self.process = subprocess.Popen(
            [executable, *CHROMIUM_FLAGS, *extra_flags, f"--user-data-dir={self.profile}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def devtools_port(self):
        """Reads the port Chromium chose from DevToolsActivePort (first line)."""
        path = os.path.join(self.profile, "DevToolsActivePort")
        deadline = time.monotonic() + STARTUP_SECONDS
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise SetupError(f"Chromium exited with {self.process.returncode}: {self.log_tail()}")
            try:
                with open(path) as file:
                    lines = file.read().splitlines()
                if lines and lines[0].isdigit():
                    return int(lines[0])
            except FileNotFoundError:
                pass
            time.sleep(0.1)
        raise SetupError(f"Chromium wrote no DevToolsActivePort in {STARTUP_SECONDS} s: {self.log_tail()}")

    def page_websocket_url(self, port):
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=STARTUP_SECONDS) as reply:
            targets = json.load(reply)
        pages = [t for t in targets if t.get("type") == "page"]
        if not pages:
            raise SetupError("Chromium has no page target")
        return pages[0]["webSocketDebuggerUrl"]

    def log_tail(self, lines=20):
        self.log.flush()
        with open(self.log.name, "rb") as file:
            return b"\n".join(file.read().splitlines()[-lines:]).decode(errors="replace")

    def stop(self):
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self.log.close()
        shutil.rmtree(self.profile, ignore_errors=True)


def read_playlist(playlist_url):
    with urllib.request.urlopen(playlist_url, timeout=STARTUP_SECONDS) as reply:
        return reply.read().decode("utf-8", errors="replace")


def media_playlist(playlist_url):
    """The text of the playlist, or of its first variant when it is a master playlist."""
    text = read_playlist(playlist_url)
    if "#EXT-X-STREAM-INF" not in text:
        return text
    lines = text.splitlines()
    for index, line in enumerate(lines):
        if line.startswith("#EXT-X-STREAM-INF") and index + 1 < len(lines):
            return read_playlist(urllib.parse.urljoin(playlist_url, lines[index + 1].strip()))
    return text


def playlist_duration(text):
    """Sum of the EXTINF durations of a media playlist, in seconds."""
    return sum(
        float(line[len(EXTINF):].split(",", 1)[0])
        for line in text.splitlines()
        if line.startswith(EXTINF)
    )


def last_sequence(text):
    """The media sequence number of the playlist's last segment."""
    lines = text.splitlines()
    first = next((int(line[len(MEDIA_SEQUENCE):]) for line in lines if line.startswith(MEDIA_SEQUENCE)), 0)
    return first + sum(1 for line in lines if line.startswith(EXTINF)) - 1


def player_url(playlist_url, rate, page=None):
    parts = urllib.parse.urlsplit(playlist_url)
    # A page on another origin names the playlist whole; one beside it, by path (and query).
    source = playlist_url if page and not page.startswith(f"{parts.scheme}://{parts.netloc}/") else \
        parts.path + ("?" + parts.query if parts.query else "")
    query = urllib.parse.urlencode({"src": source, "rate": rate})
    if page:
        return page + "?" + query
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, serve.PLAYER_PATH, query, ""))


def set_rate_when_shown(devtools, rate):
    """Sets the playback rate of Chromium's own media document once its video element exists."""
    expression = (f"(v => v ? (v.defaultPlaybackRate = v.playbackRate = {rate}, true) : false)"
                  "(document.querySelector('video'))")
    deadline = time.monotonic() + STARTUP_SECONDS
    while not devtools.evaluate(expression):
        if time.monotonic() > deadline:
            raise SetupError(f"the playlist opened no video element in {STARTUP_SECONDS} s")
        time.sleep(POLL_SECONDS)


def media_errors(events):
    """Chromium's media errors from Media domain events: each error's type and its causes' types, and
    every error-level message."""
    errors = []
    for event in events:
        params = event.get("params", {})
        if event.get("method") == "Media.playerErrorsRaised":
            for error in params.get("errors", []):
                causes, pending = [], list(error.get("cause", []))
                while pending:
                    cause = pending.pop(0)
                    causes.append(cause.get("errorType"))
                    pending.extend(cause.get("cause", []))
                errors.append(" <- ".join([error.get("errorType", "?"), *causes]))
        elif event.get("method") == "Media.playerMessagesLogged":
            errors.extend(m.get("message") for m in params.get("messages", []) if m.get("level") == "error")
    return errors


def watch(devtools, args, playlist_url):
    """Polls the video element until it ends, fails, or time runs out; returns the report."""
    started = time.monotonic()
    deadline = started + args.timeout
    first_time = None
    first_edge = None
    report = {}
    while time.monotonic() < deadline:
        state = json.loads(devtools.evaluate(STATE_EXPRESSION) or "{}")
        if state.get("missing"):
            # The navigation has not reached the player page yet.
            time.sleep(POLL_SECONDS)
            continue
        report.update(state)
        if state.get("error"):
            break
        current = state.get("currentTime", 0)
        if first_time is None and current > 0:
            first_time = current
        report["played"] = current > 0
        size = [state.get("videoWidth", 0), state.get("videoHeight", 0)]
        sizes = report.setdefault("sizes", [])
        if size[1] > 0 and (not sizes or sizes[-1]["size"] != size):
            sizes.append({"size": size, "at": round(current, 3)})
        if sizes:
            report["playedAfterSwitch"] = round(current - sizes[-1]["at"], 3)
        if args.live and first_time is not None:
            # What the playlist held when playback began, and how far it grew since.
            text = media_playlist(playlist_url)
            if first_edge is None:
                first_edge = last_sequence(text)
                report["listedAtStart"] = playlist_duration(text)
            report["segmentsAdded"] = last_sequence(text) - first_edge
            report["playedSeconds"] = round(current - first_time, 3)
            if report["playedSeconds"] >= args.live_seconds:
                break
        elif state.get("ended"):
            break
        time.sleep(POLL_SECONDS)
    report["wallSeconds"] = round(time.monotonic() - started, 2)
    report.setdefault("played", False)
    report.setdefault("error", None)
    return report


def succeeded(report, args):
    if report.get("error") or not report.get("played"):
        return False
    if args.live:
        played = report.get("playedSeconds", 0)
        return (played >= args.live_seconds and played > report["listedAtStart"]
                and report["segmentsAdded"] > 0)
    durations = (report.get("duration"), report.get("playlistDuration"))
    if not report.get("ended") or None in durations:
        return False
    return all(report["currentTime"] >= d - END_TOLERANCE_SECONDS for d in durations)


@contextlib.contextmanager
def page_devtools(executable):
    """A headless Chromium and the DevTools connection to its page; both closed on the way out."""
    chromium = Chromium(executable)
    try:
        websocket = WebSocket(chromium.page_websocket_url(chromium.devtools_port()), timeout=STARTUP_SECONDS)
        try:
            yield DevTools(websocket)
        finally:
            websocket.close()
    finally:
        chromium.stop()


def run(args, playlist_url):
    with page_devtools(args.chromium) as devtools:
        rate = args.rate if args.rate is not None else (1.0 if args.live else DEFAULT_VOD_RATE)
        if args.throttle_kbps:
            devtools.call("Network.enable")
            bytes_per_second = args.throttle_kbps * 1000 / 8
            devtools.call("Network.emulateNetworkConditions", offline=False, latency=0,
                          downloadThroughput=bytes_per_second, uploadThroughput=bytes_per_second)
        if args.media_log:
            devtools.kept_domains = ("Media",)
            devtools.call("Media.enable")
        if args.open_playlist:
            devtools.call("Page.navigate", url=playlist_url)
            set_rate_when_shown(devtools, rate)
        else:
            devtools.call("Page.navigate", url=player_url(playlist_url, rate, args.player_page))
        report = watch(devtools, args, playlist_url)
        if args.media_log:
            # The pipeline's error event may trail the element's error: a moment, then one call reads it.
            time.sleep(MEDIA_LOG_SETTLE_SECONDS)
            devtools.evaluate("0")
            report["mediaErrors"] = media_errors(devtools.events)
    if not args.live:
        report["playlistDuration"] = playlist_duration(media_playlist(playlist_url))
    return report


def parse_arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--url", help="playlist URL on a server that serves the player page")
    parser.add_argument("--player-page", help="the player page's URL, when it is not serve.PLAYER_PATH on "
                        "the playlist's server (an object store keeps it in a bucket)")
    source.add_argument("--dir", help="directory to serve on a free port; plays playlist.m3u8")
    parser.add_argument("--timeout", type=float, default=60, help="seconds to wait for the end")
    parser.add_argument("--live", action="store_true", help="live stream: no end expected")
    parser.add_argument("--live-seconds", type=float, default=6, help="media seconds a live stream must play")
    parser.add_argument("--rate", type=float, help="playbackRate (default 4 for VOD, 1 for live)")
    parser.add_argument("--playlist", default="playlist.m3u8", help="with --dir: the playlist to play")
    parser.add_argument("--throttle-kbps", type=float, help="limit the network to this many kb/s")
    parser.add_argument("--open-playlist", action="store_true",
                        help="open the playlist itself (Chromium's media document) instead of a player page")
    parser.add_argument("--media-log", action="store_true", help="report Chromium's media pipeline errors")
    parser.add_argument("--chromium", default=shutil.which("chromium") or "chromium")
    return parser.parse_args(argv)


def main(argv):
    args = parse_arguments(argv)
    # A SIGTERM from a test's timeout must still run the cleanup in `finally`.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    server = None
    try:
        if args.dir:
            server = serve.start_in_background(args.dir)
            playlist_url = f"http://127.0.0.1:{server.server_address[1]}/{args.playlist}"
        else:
            playlist_url = args.url
        for attempt in range(1, (THROTTLED_ATTEMPTS if args.throttle_kbps else 1) + 1):
            report = run(args, playlist_url)
            report["attempts"] = attempt
            if THROTTLED_RETRY_SIGNATURE not in json.dumps(report.get("error")):
                break
    except (SetupError, OSError) as error:
        print(json.dumps({"played": False, "setupError": str(error)}), flush=True)
        return 2
    finally:
        if server:
            server.shutdown()
            server.server_close()
    print(json.dumps(report), flush=True)
    return 0 if succeeded(report, args) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
