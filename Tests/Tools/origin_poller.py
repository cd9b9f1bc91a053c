#!/usr/bin/env python3
"""Watches a media playlist on an origin while it is being published and reports every moment
it was unsafe for a viewer.

Usage: origin_poller.py PLAYLIST_URL [--interval S] [--timeout S] [--sliding]

Fetches the playlist every --interval seconds until it carries EXT-X-ENDLIST, --timeout
passes, or SIGTERM. Each new version must list segments in sequence order, keep every segment
an earlier version listed (a growing playlist only appends; with --sliding, a live window may
drop segments from its head as its EXT-X-MEDIA-SEQUENCE grows, and only those), and list only
files that the origin serves: each newly listed segment and EXT-X-MAP is fetched at once, and a
missing one is a violation, as is an EXT-X-KEY URI it does not serve. With --sliding, the oldest
listed segment is fetched again at every poll, since that is the file a deletion would take away
while the playlist still lists it.
Prints one JSON line {"polls", "versions", "listed", "endList", "segmentsSeen",
"violations": [...]}; exits 0 when the playlist reached ENDLIST without a violation, 1
otherwise.
"""
import argparse
import json
import re
import signal
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

REQUEST_TIMEOUT_SECONDS = 5
MAP_URI = re.compile(r'#EXT-X-MAP:.*URI="([^"]+)"')
KEY_URI = re.compile(r'#EXT-X-KEY:.*URI="([^"]+)"')
MEDIA_SEQUENCE = re.compile(r"#EXT-X-MEDIA-SEQUENCE:(\d+)")
SEGMENT_NUMBER = re.compile(r"(\d+)\.m4s$")


def fetch(url):
    """(status, body) without raising for HTTP errors."""
    try:
        with urllib.request.urlopen(url, timeout=REQUEST_TIMEOUT_SECONDS) as reply:
            return reply.status, reply.read()
    except urllib.error.HTTPError as error:
        return error.code, b""


def media_sequence(text):
    match = MEDIA_SEQUENCE.search(text)
    return int(match.group(1)) if match else 0


def parse(text):
    """(URIs the playlist needs, in order: maps, keys and segments; segment URIs; ENDLIST present)."""
    needed, segments = [], []
    for line in text.splitlines():
        match = MAP_URI.match(line) or KEY_URI.match(line)
        if match:
            needed.append(match.group(1))
        elif line and not line.startswith("#"):
            needed.append(line)
            segments.append(line)
    return needed, segments, "#EXT-X-ENDLIST" in text.splitlines()


class Poller:
    def __init__(self, playlist_url, sliding=False):
        self.playlist_url = playlist_url
        self.sliding = sliding
        self.present = set()
        self.seen = set()
        self.previous_text = None
        self.previous_segments = []
        self.previous_sequence = 0
        self.report = {"polls": 0, "versions": 0, "listed": 0, "endList": False, "segmentsSeen": 0,
                       "violations": []}

    def violation(self, message):
        self.report["violations"].append(message)

    def poll(self):
        self.report["polls"] += 1
        status, body = fetch(self.playlist_url)
        if status == 404 and self.previous_text is None:
            return
        if status != 200:
            self.violation(f"playlist answered {status}")
            return
        text = body.decode("utf-8", errors="replace")
        if text == self.previous_text:
            self.check_oldest_still_served()
            return
        self.report["versions"] += 1
        needed, segments, end_list = parse(text)
        sequence = media_sequence(text)
        kept = self.previous_segments
        if self.sliding:
            if sequence < self.previous_sequence:
                self.violation(f"version {self.report['versions']} goes back to media sequence {sequence}")
            kept = self.previous_segments[max(0, sequence - self.previous_sequence):]
        if segments[:len(kept)] != kept:
            self.violation(f"version {self.report['versions']} does not extend the previous one")
        numbers = [int(m.group(1)) for m in map(SEGMENT_NUMBER.search, segments) if m]
        if numbers != sorted(numbers) or len(set(numbers)) != len(numbers):
            self.violation(f"version {self.report['versions']} lists segments out of order: {numbers}")
        for uri in needed:
            if uri in self.present:
                continue
            uri_status, _ = fetch(urllib.parse.urljoin(self.playlist_url, uri))
            if uri_status == 200:
                self.present.add(uri)
            else:
                self.violation(f"version {self.report['versions']} lists {uri}, which answered {uri_status}")
        self.previous_text, self.previous_segments, self.previous_sequence = text, segments, sequence
        self.seen.update(segments)
        self.report["listed"] = len(segments)
        self.report["segmentsSeen"] = len(self.seen)
        self.report["endList"] = end_list
        self.check_oldest_still_served()

    def check_oldest_still_served(self):
        """A listed file must stay on the origin as long as the playlist lists it."""
        if not self.sliding or not self.previous_segments:
            return
        oldest = self.previous_segments[0]
        status, _ = fetch(urllib.parse.urljoin(self.playlist_url, oldest))
        if status != 200:
            self.violation(f"version {self.report['versions']} still lists {oldest}, which now answered {status}")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url")
    parser.add_argument("--interval", type=float, default=0.05)
    parser.add_argument("--timeout", type=float, default=120)
    parser.add_argument("--sliding", action="store_true", help="a live window may drop segments from its head")
    args = parser.parse_args(argv)
    # A parent may start us with signals blocked (Foundation's Process does); SIGTERM must stop us.
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    return watch(Poller(args.url, sliding=args.sliding), args.interval, args.timeout, stopping)


def watch(poller, interval, timeout, stopping):
    """Polls until ENDLIST, the timeout or a stop; prints the report; the exit status."""
    deadline = time.monotonic() + timeout
    while not stopping and not poller.report["endList"] and time.monotonic() < deadline:
        try:
            poller.poll()
        except OSError as error:
            poller.violation(f"playlist could not be fetched: {error}")
        time.sleep(interval)
    print(json.dumps(poller.report), flush=True)
    return 0 if poller.report["endList"] and not poller.report["violations"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
