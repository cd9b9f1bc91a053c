#!/usr/bin/env python3
"""Opens hlscap's preview page in headless Chromium, waits for the recordings' timeline and its
thumbnails, clicks thumbnail N (from 0) and watches the recording play from that moment.

Usage: preview_timeline.py PAGE_URL [--click N] [--seconds S] [--chromium PATH]

Prints one JSON line:
  {"thumbnails": [{"at", "src", "naturalWidth"}], "clickedAt", "playing", "playedSeconds", "shownDate",
   "status", "error"}
playing is the playlist the page plays after the click.
shownDate is the EXT-X-PROGRAM-DATE-TIME of the frame on screen (ms since 1970) once S seconds of the
recording played. Exit 0 when every thumbnail loaded and the recording played S seconds, 1 otherwise,
2 on set-up failures.
"""
import argparse
import json
import os
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from chromium_play import Chromium, DevTools, SetupError, WebSocket, STARTUP_SECONDS  # noqa: E402

POLL_SECONDS = 0.25
LOAD_TIMEOUT_SECONDS = 40

THUMBNAILS = """JSON.stringify(window.hlscapPreview ? Array.from(document.querySelectorAll('#timeline img')).map(image =>
  ({at: image.alt, src: image.src, complete: image.complete, naturalWidth: image.naturalWidth})) : null)"""
CLICK = "document.querySelectorAll('#timeline figure')[{0}].click(); document.querySelectorAll('#timeline img')[{0}].alt"
STATE = """JSON.stringify({error: window.hlscapPreview.error, recording: window.hlscapPreview.recording,
  shownDate: window.hlscapPreview.shownDate, playing: window.hlscapPreview.playing, currentTime: document.getElementById('video').currentTime,
  status: document.getElementById('status').textContent})"""


def watch(devtools, seconds, click):
    report = {"thumbnails": [], "error": None}
    deadline = time.monotonic() + LOAD_TIMEOUT_SECONDS
    while True:
        images = json.loads(devtools.evaluate(THUMBNAILS) or "null")
        if images and all(image["complete"] for image in images):
            report["thumbnails"] = [{key: image[key] for key in ("at", "src", "naturalWidth")} for image in images]
            break
        if time.monotonic() > deadline:
            report["thumbnails"] = images or []
            report["error"] = f"the thumbnails did not load within {LOAD_TIMEOUT_SECONDS} s"
            return report
        time.sleep(POLL_SECONDS)
    if click >= len(report["thumbnails"]):
        report["error"] = f"no thumbnail {click} to click: {len(report['thumbnails'])} shown"
        return report
    report["clickedAt"] = devtools.evaluate(CLICK.format(click))
    started = None
    first_time = 0
    deadline = time.monotonic() + LOAD_TIMEOUT_SECONDS + seconds * 2
    while True:
        state = json.loads(devtools.evaluate(STATE) or "{}")
        report["status"] = state.get("status")
        if state.get("error"):
            report["error"] = state["error"]
            return report
        current = state.get("currentTime") or 0
        playing = state.get("recording") and (state.get("status") or "").startswith("playing the recording")
        if playing and started is None:
            started, first_time = time.monotonic(), current
        if started is not None and current - first_time >= seconds:
            report["playedSeconds"] = round(current - first_time, 3)
            report["shownDate"] = state.get("shownDate")
            report["playing"] = state.get("playing")
            return report
        if time.monotonic() > deadline:
            report["error"] = f"the recording played {current - first_time:.1f} s of {seconds} s"
            return report
        time.sleep(POLL_SECONDS)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url")
    parser.add_argument("--click", type=int, default=0)
    parser.add_argument("--seconds", type=float, default=2)
    parser.add_argument("--chromium", default="chromium")
    args = parser.parse_args(argv)
    try:
        chromium = Chromium(args.chromium)
        try:
            websocket = WebSocket(chromium.page_websocket_url(chromium.devtools_port()), timeout=STARTUP_SECONDS)
            try:
                devtools = DevTools(websocket)
                devtools.call("Page.navigate", url=args.url)
                report = watch(devtools, args.seconds, args.click)
            finally:
                websocket.close()
        finally:
            chromium.stop()
    except (SetupError, OSError) as error:
        print(json.dumps({"error": f"set-up: {error}"}))
        return 2
    print(json.dumps(report))
    loaded = report["thumbnails"] and all(image["naturalWidth"] > 0 for image in report["thumbnails"])
    return 0 if report["error"] is None and loaded else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
