#!/usr/bin/env python3
"""Opens the index page of hlscap's server for many streams in headless Chromium, waits until it
shows every camera with its snapshot, clicks camera NAME's picture and watches its player page play.

Usage: index_play.py INDEX_URL --click NAME [--seconds S] [--chromium PATH]

Prints one JSON line:
  {"cards": [{"name", "state", "href", "snapshotWidth"}], "page", "back", "playedSeconds", "appended", "error"}
cards are the index's cameras in order; snapshotWidth is the natural width of the snapshot shown (0 when
none loaded). page is the address the click led to, back where its link to the index leads. Exit 0
when every live camera's snapshot loaded and the clicked camera played S seconds, 1 otherwise, 2 on
set-up failures.
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
LOAD_TIMEOUT_SECONDS = 30

CARDS = """JSON.stringify(Array.from(document.querySelectorAll('.stream')).map(card => {
  const image = card.querySelector('.picture img');
  return {name: card.dataset.name, state: card.querySelector('.state').textContent,
          href: card.querySelector('a.picture').href, complete: image.complete, snapshotWidth: image.naturalWidth};
}))"""
CLICK = "document.querySelector('.stream[data-name=\"{0}\"] a.picture').click(); true"
STATE = """JSON.stringify({page: location.href, preview: window.hlscapPreview || null,
  back: document.getElementById('index') && !document.getElementById('index').hidden ? document.getElementById('index').href : null,
  currentTime: document.getElementById('video') ? document.getElementById('video').currentTime : 0})"""


def reload_until_snapshots(devtools, url):
    """The index shows a snapshot once a stream listed its first segment: reloaded until every live one has."""
    deadline = time.monotonic() + LOAD_TIMEOUT_SECONDS
    cards = []
    while time.monotonic() < deadline:
        devtools.call("Page.navigate", url=url)
        settle = time.monotonic() + 3
        while time.monotonic() < settle:
            cards = json.loads(devtools.evaluate(CARDS) or "[]")
            if cards and all(card["complete"] for card in cards):
                break
            time.sleep(POLL_SECONDS)
        if cards and all(card["snapshotWidth"] > 0 for card in cards if card["state"] == "live"):
            return cards, None
        time.sleep(1)
    return cards, f"not every live camera's snapshot loaded within {LOAD_TIMEOUT_SECONDS} s"


def watch(devtools, url, click, seconds):
    cards, error = reload_until_snapshots(devtools, url)
    report = {"cards": [{key: card[key] for key in ("name", "state", "href", "snapshotWidth")} for card in cards],
              "error": error}
    if error:
        return report
    if not any(card["name"] == click for card in cards):
        report["error"] = f"no camera {click} on the index"
        return report
    devtools.evaluate(CLICK.format(click))
    started = None
    first_time = 0
    deadline = time.monotonic() + LOAD_TIMEOUT_SECONDS + seconds * 2
    while True:
        state = json.loads(devtools.evaluate(STATE) or "{}")
        report["page"] = state.get("page")
        report["back"] = state.get("back")
        preview = state.get("preview") or {}
        if preview.get("error"):
            report["error"] = preview["error"]
            return report
        current = state.get("currentTime") or 0
        if preview and current > 0 and started is None:
            started, first_time = time.monotonic(), current
        if started is not None and current - first_time >= seconds:
            report["playedSeconds"] = round(current - first_time, 3)
            report["appended"] = preview.get("appended")
            return report
        if time.monotonic() > deadline:
            report["error"] = f"the player played {current - first_time:.1f} s of {seconds} s"
            return report
        time.sleep(POLL_SECONDS)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url")
    parser.add_argument("--click", required=True)
    parser.add_argument("--seconds", type=float, default=2)
    parser.add_argument("--chromium", default="chromium")
    args = parser.parse_args(argv)
    try:
        chromium = Chromium(args.chromium)
        try:
            websocket = WebSocket(chromium.page_websocket_url(chromium.devtools_port()), timeout=STARTUP_SECONDS)
            try:
                report = watch(DevTools(websocket), args.url, args.click, args.seconds)
            finally:
                websocket.close()
        finally:
            chromium.stop()
    except (SetupError, OSError) as error:
        print(json.dumps({"error": f"set-up: {error}"}))
        return 2
    print(json.dumps(report))
    return 0 if report["error"] is None else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
