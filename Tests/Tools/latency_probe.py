#!/usr/bin/env python3
"""Measures glass-to-glass latency: plays a live HLS stream in headless Chromium and samples the
wall clock minus the capture time of the frame on screen.

Usage: latency_probe.py URL --hlsjs FILE [--seconds S] [--chromium PATH] [--any-certificate] [--no-seek]
       latency_probe.py PAGE_URL --preview [--vod] [--seconds S] [--chromium PATH] [--any-certificate]

With --hlsjs, a page served from a loopback port of this tool (another origin than the stream,
so CORS is exercised) plays URL with hls.js in low-latency mode; the frame's capture time is
hls.playingDate, from EXT-X-PROGRAM-DATE-TIME; like Safari, the player may play up to 10 % faster to
reach its target latency, and with parts it seeks to its target when more than a part behind it
(hls.js's liveMaxLatencyDuration; --no-seek leaves hls.js's defaults). With --preview, PAGE_URL is hlscap's own preview
page (GET /), which reports the same figure. Sampling starts once playback has begun and lasts
--seconds of playback. --vod plays a finished stream (no PROGRAM-DATE-TIME) and only checks that
--seconds of it played without an error. Prints one JSON line:
  {"samples", "medianSeconds", "p95Seconds", "playedSeconds", "error", "stalls", "protocols"}
and, with --hlsjs, hls.js's own figures: "playerMedianSeconds" (how far behind the live edge of its
last playlist it plays, hls.latency), "targetLatencySeconds" (how far it aims to: PART-HOLD-BACK) and
"seeksPastSeconds" (the liveMaxLatencyDuration set).
where "protocols" lists the protocols the page's requests went over (Resource Timing's
nextHopProtocol: "h2", "http/1.1"). With --hlsjs, "streamFiles" counts the files the page fetched
from the stream's server by protocol and kind: {"h2": {"playlist": N, "part": N, "other": N}}.
--any-certificate trusts a self-signed HTTPS server.
Exit 0 when playback ran the whole time without an error, 1 otherwise, 2 on set-up failures.
"""
import argparse
import http.server
import json
import os
import statistics
import sys
import threading
import time
import urllib.parse

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from chromium_play import Chromium, DevTools, SetupError, WebSocket, STARTUP_SECONDS  # noqa: E402

SAMPLE_SECONDS = 0.25
START_TIMEOUT_SECONDS = 40

PAGE = """<!doctype html>
<html><body><video id="video" muted autoplay playsinline></video>
<script type="module">
import { t as attach, n as isSupported } from "./hls.js";
const video = document.getElementById("video");
const source = new URLSearchParams(location.search).get("src");
window.probe = { latency: null, error: null, supported: isSupported(), streamFiles: {} };
// Every file fetched from the stream's server, by protocol and kind (an observer, not the
// timeline buffer, which stops at 250 entries).
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    const url = new URL(entry.name);
    // A request hls.js aborted, or one answered from the cache, went over no protocol.
    if (url.origin !== new URL(source).origin || !entry.nextHopProtocol) continue;
    const kind = url.pathname.endsWith(".m3u8") ? "playlist" : (url.pathname.includes("/part/") ? "part" : "other");
    const counts = window.probe.streamFiles[entry.nextHopProtocol] = window.probe.streamFiles[entry.nextHopProtocol] || {};
    counts[kind] = (counts[kind] || 0) + 1;
  }
}).observe({ type: "resource", buffered: true });
const hls = attach(video, source);
// Like Safari's own LL-HLS player, play up to 10 % faster to reach the target latency after a
// start-up or a stall, rather than stay behind for good.
hls.config.maxLiveSyncPlaybackRate = 1.1;
// hls.js plays faster only with over a second buffered ahead, which a sub-second latency never has:
// it starts behind its target by what fetching the first parts took and stays there. With a part
// target, more than a part behind the target makes hls.js seek to it (liveMaxLatencyDuration), as an
// LL-HLS page would set it; seek=0 leaves hls.js's defaults.
if (new URLSearchParams(location.search).get("seek") !== "0") {
  hls.on("hlsLevelUpdated", (event, data) => {
    const part = data.details.partTarget;
    if (part && hls.targetLatency && hls.config.liveMaxLatencyDuration === undefined) {
      hls.config.liveMaxLatencyDuration = hls.targetLatency + part;
      window.probe.maxLatency = hls.config.liveMaxLatencyDuration;
    }
  });
}
hls.on("hlsError", (event, data) => { if (data.fatal) window.probe.error = data.type + ": " + data.details; });
setInterval(() => {
  const date = hls.playingDate;
  window.probe.latency = date && !video.paused ? (Date.now() - date.getTime()) / 1000 : null;
  window.probe.currentTime = video.currentTime;
  // hls.js's own view: how far behind the live edge it plays, and how far it aims to.
  window.probe.playerLatency = hls.latency;
  window.probe.targetLatency = hls.targetLatency;
}, 100);
</script></body></html>
"""

HLSJS_STATE = "JSON.stringify(window.probe || {missing: true})"
PROTOCOLS = ("JSON.stringify([...new Set(performance.getEntriesByType('resource')"
             ".map(entry => entry.nextHopProtocol).filter(name => name))].sort())")
PREVIEW_STATE = ("JSON.stringify(window.hlscapPreview ? {latency: window.hlscapPreview.latencySeconds, "
                 "error: window.hlscapPreview.error, currentTime: document.getElementById('video').currentTime}"
                 " : {missing: true})")


def page_server(hlsjs_path):
    """A loopback server for the probe page and hls.js; returns (server, port)."""
    with open(hlsjs_path, "rb") as file:
        module = file.read()
    page = PAGE.encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            path = self.path.split("?")[0]
            body, kind = (page, "text/html") if path == "/probe.html" else (
                (module, "text/javascript") if path == "/hls.js" else (b"", "text/plain"))
            self.send_response(200 if body else 404)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, server.server_address[1]


def sample(devtools, expression, seconds, vod=False):
    report = {"samples": 0, "error": None, "stalls": 0}
    state = {}
    latencies = []
    player_latencies = []
    started = None
    first_time = 0
    last_time = None
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    while True:
        state = json.loads(devtools.evaluate(expression) or "{}")
        now = time.monotonic()
        if state.get("error"):
            report["error"] = state["error"]
            break
        current = state.get("currentTime") or 0
        if vod:
            report["currentTime"] = current
            if started is None and current > 0:
                started, first_time = now, current
            if started is not None and current - first_time >= seconds:
                report["playedSeconds"] = round(current - first_time, 3)
                if "streamFiles" in state:
                    report["streamFiles"] = state["streamFiles"]
                return report
            if now > deadline + seconds * 2:
                report["error"] = f"played {current} s of {seconds} s"
                return report
            time.sleep(SAMPLE_SECONDS)
            continue
        if state.get("latency") is not None and current > 0:
            if started is None:
                started = now
            if last_time is not None and current <= last_time:
                report["stalls"] += 1
            last_time = current
            latencies.append(state["latency"])
            if state.get("playerLatency") is not None:
                player_latencies.append(state["playerLatency"])
            if state.get("targetLatency") is not None:
                report["targetLatencySeconds"] = round(state["targetLatency"], 3)
            if state.get("maxLatency") is not None:
                report["seeksPastSeconds"] = round(state["maxLatency"], 3)
        if started is None and now > deadline:
            report["error"] = f"playback did not start within {START_TIMEOUT_SECONDS} s"
            break
        if started is not None and now - started >= seconds:
            break
        time.sleep(SAMPLE_SECONDS)
    report["playedSeconds"] = round(time.monotonic() - started, 2) if started else 0
    if "streamFiles" in state:
        report["streamFiles"] = state["streamFiles"]
    if latencies:
        ordered = sorted(latencies)
        report["samples"] = len(ordered)
        report["medianSeconds"] = round(statistics.median(ordered), 3)
        report["p95Seconds"] = round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))], 3)
        report["maxSeconds"] = round(ordered[-1], 3)
    if player_latencies:
        report["playerMedianSeconds"] = round(statistics.median(player_latencies), 3)
    return report


def run(args):
    server = None
    if args.preview:
        url, expression = args.url, PREVIEW_STATE
    else:
        server, port = page_server(args.hlsjs)
        # Encoded whole: a signed URL's own query must reach the page's src intact.
        url = f"http://127.0.0.1:{port}/probe.html?src={urllib.parse.quote(args.url, safe='')}"
        if args.no_seek:
            url += "&seek=0"
        expression = HLSJS_STATE
    chromium = Chromium(args.chromium, ["--ignore-certificate-errors"] if args.any_certificate else [])
    try:
        websocket = WebSocket(chromium.page_websocket_url(chromium.devtools_port()), timeout=STARTUP_SECONDS)
        try:
            devtools = DevTools(websocket)
            devtools.call("Page.navigate", url=url)
            report = sample(devtools, expression, args.seconds, vod=args.vod)
            report["protocols"] = json.loads(devtools.evaluate(PROTOCOLS) or "[]")
            return report
        finally:
            websocket.close()
    finally:
        chromium.stop()
        if server:
            server.shutdown()


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url")
    parser.add_argument("--hlsjs")
    parser.add_argument("--preview", action="store_true")
    parser.add_argument("--vod", action="store_true")
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--chromium", default="chromium")
    parser.add_argument("--any-certificate", action="store_true")
    parser.add_argument("--no-seek", action="store_true")
    args = parser.parse_args(argv)
    if not args.preview and not args.hlsjs:
        parser.error("--hlsjs FILE or --preview")
    try:
        report = run(args)
    except (SetupError, OSError) as error:
        print(json.dumps({"error": f"set-up: {error}"}))
        return 2
    print(json.dumps(report))
    played = report.get("playedSeconds", 0) >= args.seconds * 0.9
    ok = report["error"] is None and played and (args.vod or report["samples"] > 0)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
