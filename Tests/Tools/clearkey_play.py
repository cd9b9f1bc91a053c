#!/usr/bin/env python3
"""Plays a SAMPLE-AES (cbcs) fMP4 HLS stream in headless Chromium through EME's Clear Key.

Usage: clearkey_play.py --dir DIR --key-file KEY [--playlist NAME] [--timeout S] [--rate R]
                        [--chromium PATH]

Neither Chromium's native HLS nor hls.js without a key system plays SAMPLE-AES in fragmented MP4:
a browser decrypts `cbcs` samples only in its Content Decryption Module, behind Encrypted Media
Extensions. This tool is the smallest player that does: a page served beside DIR reads the media
playlist, asks for the `org.w3.clearkey` key system with the `cbcs` encryption scheme, hands the CDM
the key from KEY (16 bytes) under the key ID the init section's `tenc` box carries, appends the init
section and every segment to one Media Source Extensions buffer, and plays to the end.

Prints one JSON line: {"played", "ended", "currentTime", "duration", "start", "error", "frames",
"dropped", "decodedBytes", "keyID", ...}: "frames" is the count of video frames the element decoded.
Samples the CDM did not restore fail to decode ("error" names the decoder's complaint), which is what a
wrong key gives. The picture itself cannot be read back: Chromium paints decrypted video black on a
canvas, by design.
Exit 0 when the stream played to its end without a media error, 1 otherwise, 2 when the stream,
Chromium or the DevTools connection could not be reached.
"""
import argparse
import functools
import http.server
import json
import os
import shutil
import signal
import struct
import sys
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from chromium_play import SetupError, page_devtools  # noqa: E402

PAGE_PATH = "/.clearkey-player.html"
POLL_SECONDS = 0.25

PAGE = """<!doctype html>
<html><body><video muted playsinline></video>
<script>
const state = {error: null, step: "start"};
window.clearKeyState = state;
const b64url = bytes => btoa(String.fromCharCode(...bytes)).replace(/\\+/g, "-").replace(/\\//g, "_")
  .replace(/=+$/, "");
const hex = text => new Uint8Array(text.match(/../g).map(h => parseInt(h, 16)));
async function bytes(url) {
  const reply = await fetch(url);
  if (!reply.ok) throw new Error(url + ": HTTP " + reply.status);
  return new Uint8Array(await reply.arrayBuffer());
}
function appended(buffer, data) {
  return new Promise((resolve, reject) => {
    buffer.addEventListener("updateend", resolve, {once: true});
    buffer.addEventListener("error", () => reject(new Error("SourceBuffer error")), {once: true});
    buffer.appendBuffer(data);
  });
}
async function play() {
  const query = new URLSearchParams(location.search);
  const playlist = query.get("playlist"), key = hex(query.get("key")), kid = hex(query.get("kid"));
  const video = document.querySelector("video");
  video.addEventListener("error", () => {
    state.error = video.error ? (video.error.code + " " + video.error.message) : "error";
  });
  const text = await (await fetch(playlist)).text();
  let init = null;
  const segments = [];
  for (const line of text.split("\\n").map(l => l.trim())) {
    if (line.startsWith("#EXT-X-MAP:")) init = /URI="([^"]+)"/.exec(line)[1];
    else if (line && !line.startsWith("#")) segments.push(line);
  }
  const base = new URL(playlist, location.href);
  const mime = 'video/mp4; codecs="' + query.get("codecs") + '"';
  state.step = "key system";
  const videoCodecs = query.get("codecs").split(",").filter(c => !c.startsWith("mp4a"));
  const access = await navigator.requestMediaKeySystemAccess("org.w3.clearkey", [{
    initDataTypes: ["keyids", "cenc"],
    videoCapabilities: [{contentType: 'video/mp4; codecs="' + videoCodecs.join(",") + '"',
                         encryptionScheme: "cbcs"}],
    audioCapabilities: [{contentType: 'audio/mp4; codecs="mp4a.40.2"', encryptionScheme: "cbcs"}],
  }]);
  const keys = await access.createMediaKeys();
  await video.setMediaKeys(keys);
  const session = keys.createSession();
  const licensed = new Promise(resolve => session.addEventListener("message", async () => {
    const license = {keys: [{kty: "oct", k: b64url(key), kid: b64url(kid)}], type: "temporary"};
    await session.update(new TextEncoder().encode(JSON.stringify(license)));
    resolve();
  }, {once: true}));
  await session.generateRequest("keyids", new TextEncoder().encode(JSON.stringify({kids: [b64url(kid)]})));
  await licensed;
  state.step = "media source";
  const source = new MediaSource();
  video.src = URL.createObjectURL(source);
  await new Promise(resolve => source.addEventListener("sourceopen", resolve, {once: true}));
  const buffer = source.addSourceBuffer(mime);
  await appended(buffer, await bytes(new URL(init, base)));
  for (const segment of segments) await appended(buffer, await bytes(new URL(segment, base)));
  source.endOfStream();
  // Segments keep their decode times (a live stream's start near 10 s): play what is buffered.
  const start = buffer.buffered.length ? buffer.buffered.start(0) : 0;
  state.start = start;
  state.step = "playing";
  video.currentTime = start;
  video.playbackRate = Number(query.get("rate"));
  await video.play();
}
play().catch(error => { state.error = String(error && error.message || error); });
</script></body></html>
"""

STATE_EXPRESSION = """(() => {
  const v = document.querySelector("video"), s = window.clearKeyState || {};
  const finite = x => Number.isFinite(x) ? x : null;
  const quality = v && v.getVideoPlaybackQuality ? v.getVideoPlaybackQuality() : null;
  return JSON.stringify({
    step: s.step || null, start: s.start === undefined ? null : s.start, error: s.error || null,
    currentTime: v ? v.currentTime : 0, duration: v ? finite(v.duration) : null, ended: v ? v.ended : false,
    frames: quality ? quality.totalVideoFrames : null, dropped: quality ? quality.droppedVideoFrames : null, decodedBytes: v ? v.webkitVideoDecodedByteCount : null, videoWidth: v ? v.videoWidth : 0,
  });
})()"""


def box_payload(data, path):
    """The payload of the first box along `path` (four-character codes, nested), or None."""
    offset, end = 0, len(data)
    for index, name in enumerate(path):
        found = None
        while offset + 8 <= end:
            size, kind = struct.unpack(">I4s", data[offset:offset + 8])
            header = 8
            if size == 1:
                size, header = struct.unpack(">Q", data[offset + 8:offset + 16])[0], 16
            if size < header or offset + size > end:
                return None
            if kind.decode("latin-1") == name:
                found = (offset + header, offset + size)
                break
            offset += size
        if found is None:
            return None
        offset, end = found
        # Sample entries carry fixed fields before their children; stsd a version, flags and count.
        skip = {"stsd": 8, "encv": 78, "enca": 28}.get(name, 0)
        if index < len(path) - 1:
            offset += skip
    return data[offset:end]


def key_id(init_path):
    """The default key ID of the init section's first track (`tenc`, ISO/IEC 23001-7 8.2)."""
    with open(init_path, "rb") as file:
        data = file.read()
    for entry in ("encv", "enca"):
        tenc = box_payload(data, ["moov", "trak", "mdia", "minf", "stbl", "stsd", entry, "sinf", "schi", "tenc"])
        if tenc is not None:
            # version/flags (4), reserved (1), pattern (1), is_protected (1), per-sample IV size (1), KID.
            return tenc[8:24].hex()
    raise SetupError(f"{init_path}: no tenc box in the first track's sample entry")


def stream_codecs(directory, playlist):
    """The CODECS of the master playlist's variant that names `playlist`."""
    with open(os.path.join(directory, "master.m3u8")) as file:
        lines = file.read().splitlines()
    for index, line in enumerate(lines):
        if line.startswith("#EXT-X-STREAM-INF:") and index + 1 < len(lines) and lines[index + 1] == playlist:
            start = line.index('CODECS="') + len('CODECS="')
            return line[start:line.index('"', start)]
    raise SetupError(f"{directory}/master.m3u8 has no variant {playlist}")


def init_path(directory, playlist):
    with open(os.path.join(directory, playlist)) as file:
        for line in file:
            if line.startswith("#EXT-X-MAP:"):
                start = line.index('URI="') + len('URI="')
                return os.path.join(directory, os.path.dirname(playlist), line[start:line.index('"', start)])
    raise SetupError(f"{directory}/{playlist} has no EXT-X-MAP")


class Handler(http.server.SimpleHTTPRequestHandler):
    def do_GET(self):
        if self.path.split("?")[0] == PAGE_PATH:
            body = PAGE.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        super().do_GET()

    def log_message(self, format, *args):
        pass


def watch(devtools, timeout):
    deadline = time.monotonic() + timeout
    report = {}
    while time.monotonic() < deadline:
        report = json.loads(devtools.evaluate(STATE_EXPRESSION))
        if report["error"] or report["ended"]:
            break
        time.sleep(POLL_SECONDS)
    return report


def run(args):
    with open(args.key_file, "rb") as file:
        key = file.read()
    if len(key) != 16:
        raise SetupError(f"{args.key_file}: {len(key)} bytes, a key is 16")
    kid = key_id(init_path(args.dir, args.playlist))
    codecs = stream_codecs(args.dir, args.playlist)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=args.dir))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with page_devtools(args.chromium) as devtools:
            query = f"?playlist={args.playlist}&key={key.hex()}&kid={kid}&codecs={codecs}&rate={args.rate}"
            devtools.call("Page.navigate", url=f"http://127.0.0.1:{server.server_address[1]}{PAGE_PATH}{query}")
            report = watch(devtools, args.timeout)
    finally:
        server.shutdown()
        server.server_close()
    report["keyID"] = kid
    report["played"] = bool(report.get("ended")) and not report.get("error")
    return report


def parse_arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", required=True, help="the stream's folder (with master.m3u8)")
    parser.add_argument("--key-file", required=True, help="the 16-byte key")
    parser.add_argument("--playlist", default="playlist.m3u8")
    parser.add_argument("--timeout", type=float, default=60)
    parser.add_argument("--rate", type=float, default=4.0)
    parser.add_argument("--chromium", default=shutil.which("chromium") or "chromium")
    return parser.parse_args(argv)


def main(argv):
    args = parse_arguments(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    try:
        report = run(args)
    except (SetupError, OSError, ValueError) as error:
        print(json.dumps({"played": False, "setupError": str(error)}), flush=True)
        return 2
    print(json.dumps(report), flush=True)
    return 0 if report["played"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
