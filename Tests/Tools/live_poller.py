#!/usr/bin/env python3
"""Watches a live stream's directory while it is written and reports every moment it was unsafe
for a viewer reading it through a static web server.

Usage: live_poller.py DIR --report FILE --copy-dir COPY [--interval S] [--timeout S]

Reads DIR/playlist.m3u8 every --interval seconds (default 0.05) until it carries EXT-X-ENDLIST,
--timeout passes, or SIGTERM. Rules, each break of one is a violation:
  - every read parses (EXTM3U first, EXT-X-TARGETDURATION, each EXTINF followed by its URI), and
    no EXTINF rounds above the target duration (RFC 8216bis 4.4.3.1);
  - every listed segment (and EXT-X-MAP) is complete: it exists and its top-level boxes
    (styp/moof/mdat; ftyp/moov for the map) add up to exactly the file's size; a listed file
    never changes size afterwards;
  - EXT-X-MEDIA-SEQUENCE never goes back, EXT-X-TARGETDURATION never changes, a sequence number
    keeps its URI, and a new version only drops segments from the front;
  - a segment that leaves the playlist stays on disk for the RFC 8216bis 6.2.2 retention time:
    its duration plus that of the longest playlist that listed it. After ENDLIST the watch goes
    on until every removed segment's retention time has passed.
Each segment and map is copied into COPY the first time it is listed; at the end COPY/stream.mp4
holds the map and every segment in sequence order (the map again wherever it changes), and a
gap in the sequence numbers seen is a violation, since the copy would not cover the whole run.

Writes one JSON object to --report and prints it as one line:
  {"polls", "versions", "segments", "firstSequence", "lastSequence", "targetDuration", "endList",
   "removals": [{"uri", "leftAt", "goneAt", "retention"}], "concatenated", "violations": [...]}
(times in seconds since the poller started). Exits 0 when the playlist reached ENDLIST without a
violation, 1 otherwise.
"""
import argparse
import json
import os
import re
import signal
import struct
import sys
import time

PLAYLIST = "playlist.m3u8"
CONCATENATED = "stream.mp4"
MAP_URI = re.compile(r'#EXT-X-MAP:.*URI="([^"]+)"')
SEGMENT_BOXES = {b"styp", b"sidx", b"prft", b"emsg", b"moof", b"mdat"}
SEGMENT_REQUIRED = {b"moof", b"mdat"}
INIT_BOXES = {b"ftyp", b"moov", b"free"}
INIT_REQUIRED = {b"ftyp", b"moov"}
BOX_HEADER = 8
LARGE_SIZE = 1


class ParseError(Exception):
    pass


class Segment:
    def __init__(self, sequence, uri, duration, map_uri):
        self.sequence, self.uri, self.duration, self.map_uri = sequence, uri, duration, map_uri


class Playlist:
    def __init__(self, text):
        lines = text.splitlines()
        if not lines or lines[0] != "#EXTM3U":
            raise ParseError("does not start with #EXTM3U")
        self.target = None
        self.media_sequence = 0
        self.end_list = False
        self.segments = []
        map_uri, duration = None, None
        for line in lines[1:]:
            try:
                if line.startswith("#EXT-X-TARGETDURATION:"):
                    self.target = int(line.split(":", 1)[1])
                elif line.startswith("#EXT-X-MEDIA-SEQUENCE:"):
                    self.media_sequence = int(line.split(":", 1)[1])
                elif line.startswith("#EXTINF:"):
                    duration = float(line.split(":", 1)[1].split(",", 1)[0])
                elif line.startswith("#EXT-X-MAP:"):
                    match = MAP_URI.match(line)
                    if not match:
                        raise ParseError(f"bad map: {line}")
                    map_uri = match.group(1)
                elif line == "#EXT-X-ENDLIST":
                    self.end_list = True
                elif line and not line.startswith("#"):
                    if duration is None:
                        raise ParseError(f"{line} has no EXTINF")
                    sequence = self.media_sequence + len(self.segments)
                    self.segments.append(Segment(sequence, line, duration, map_uri))
                    duration = None
            except ValueError:
                raise ParseError(f"bad value in: {line}")
        if self.target is None:
            raise ParseError("no EXT-X-TARGETDURATION")
        if duration is not None:
            raise ParseError("EXTINF without a URI at the end")

    @property
    def duration(self):
        return sum(segment.duration for segment in self.segments)


def box_problem(data, allowed, required):
    """Why `data` is not a complete run of top-level boxes, or None."""
    offset, seen = 0, set()
    while offset < len(data):
        if offset + BOX_HEADER > len(data):
            return f"ends inside a box header at byte {offset}"
        size, kind = struct.unpack(">I4s", data[offset:offset + BOX_HEADER])
        if size == LARGE_SIZE:
            if offset + 16 > len(data):
                return f"ends inside a box header at byte {offset}"
            (size,) = struct.unpack(">Q", data[offset + BOX_HEADER:offset + 16])
        if kind not in allowed:
            return f"has a {kind.decode(errors='replace')!r} box at byte {offset}"
        if size < BOX_HEADER:
            # Size 0 ("to the end of the file") cannot tell a complete file from a cut one.
            return f"has a {kind.decode()} box of size {size}"
        if offset + size > len(data):
            return f"ends inside its {kind.decode()} box ({len(data)} of {offset + size} bytes)"
        seen.add(kind)
        offset += size
    missing = required - seen
    if missing:
        return "has no " + "/".join(sorted(kind.decode() for kind in missing)) + " box"
    return None


class Removal:
    def __init__(self, segment, left_at, retention):
        self.segment, self.left_at, self.retention = segment, left_at, retention
        self.gone_at = None


class Poller:
    def __init__(self, directory, copy_dir, interval):
        self.directory = directory
        self.copy_dir = copy_dir
        # Leaving and deleting are both seen up to one poll late, in either order.
        self.slack = 2 * interval
        self.started = time.monotonic()
        self.previous = None
        self.previous_text = None
        self.sizes = {}              # uri -> size when first listed
        self.uris = {}               # sequence -> uri
        self.copied = {}             # sequence -> segment (its map and duration)
        self.longest_playlist = {}   # sequence -> longest playlist duration that listed it
        self.removals = []
        self.violations = []
        self.polls = 0
        self.versions = 0
        self.target = None

    def now(self):
        return round(time.monotonic() - self.started, 3)

    def violation(self, message):
        self.violations.append(f"{self.now():.3f} s: {message}")

    @property
    def end_list(self):
        return self.previous is not None and self.previous.end_list

    def poll(self):
        self.polls += 1
        self.watch_removed()
        path = os.path.join(self.directory, PLAYLIST)
        try:
            with open(path, encoding="utf-8") as file:
                text = file.read()
        except FileNotFoundError:
            if self.previous is not None:
                self.violation(f"{PLAYLIST} disappeared")
            return
        if text == self.previous_text:
            self.check_sizes(self.previous)
            return
        self.previous_text = text
        try:
            playlist = Playlist(text)
        except ParseError as error:
            self.violation(f"{PLAYLIST} does not parse: {error}")
            return
        self.versions += 1
        self.check_version(playlist)
        self.check_sizes(playlist)
        self.previous = playlist

    def check_version(self, playlist):
        if self.target is None:
            self.target = playlist.target
        elif playlist.target != self.target:
            self.violation(f"EXT-X-TARGETDURATION changed from {self.target} to {playlist.target}")
        for segment in playlist.segments:
            if round(segment.duration) > playlist.target:
                self.violation(f"{segment.uri} lasts {segment.duration} s, over the target duration")
        previous = self.previous
        if previous is not None:
            if playlist.media_sequence < previous.media_sequence:
                self.violation(f"EXT-X-MEDIA-SEQUENCE went back from {previous.media_sequence} "
                               f"to {playlist.media_sequence}")
            listed = {segment.sequence for segment in playlist.segments}
            for segment in previous.segments:
                if segment.sequence in listed:
                    continue
                if segment.sequence >= playlist.media_sequence:
                    self.violation(f"{segment.uri} (sequence {segment.sequence}) vanished from "
                                   "the middle or end of the playlist")
                elif segment.sequence not in (r.segment.sequence for r in self.removals):
                    retention = segment.duration + self.longest_playlist[segment.sequence]
                    self.removals.append(Removal(segment, self.now(), retention))
        for segment in playlist.segments:
            known = self.uris.setdefault(segment.sequence, segment.uri)
            if known != segment.uri:
                self.violation(f"sequence {segment.sequence} was {known}, now {segment.uri}")
            self.longest_playlist[segment.sequence] = max(
                self.longest_playlist.get(segment.sequence, 0), playlist.duration)
            if segment.map_uri is not None and segment.map_uri not in self.sizes:
                self.check_new_file(segment.map_uri, INIT_BOXES, INIT_REQUIRED)
            if segment.uri not in self.sizes and self.check_new_file(segment.uri, SEGMENT_BOXES,
                                                                     SEGMENT_REQUIRED):
                self.copied[segment.sequence] = segment

    def check_new_file(self, uri, allowed, required):
        """Checks and copies a newly listed file; True when it is complete."""
        try:
            with open(os.path.join(self.directory, uri), "rb") as file:
                data = file.read()
        except FileNotFoundError:
            self.violation(f"lists {uri}, which does not exist")
            return False
        problem = box_problem(data, allowed, required)
        if problem:
            self.violation(f"lists {uri}, which {problem}")
            return False
        self.sizes[uri] = len(data)
        copy = os.path.join(self.copy_dir, uri)
        os.makedirs(os.path.dirname(copy), exist_ok=True)
        with open(copy, "wb") as file:
            file.write(data)
        return True

    def check_sizes(self, playlist):
        """Listed files stay as they were when first listed."""
        uris = [s.uri for s in playlist.segments] + [s.map_uri for s in playlist.segments if s.map_uri]
        for uri in dict.fromkeys(uris):
            if uri not in self.sizes:
                continue
            try:
                size = os.path.getsize(os.path.join(self.directory, uri))
            except FileNotFoundError:
                self.violation(f"{uri} is listed but was deleted")
                self.sizes.pop(uri)
                continue
            if size != self.sizes[uri]:
                self.violation(f"{uri} changed size from {self.sizes[uri]} to {size} while listed")
                self.sizes[uri] = size

    def watch_removed(self):
        now = self.now()
        for removal in self.removals:
            if removal.gone_at is not None:
                continue
            if os.path.exists(os.path.join(self.directory, removal.segment.uri)):
                continue
            removal.gone_at = now
            lifetime = now - removal.left_at
            if lifetime + self.slack < removal.retention:
                self.violation(f"{removal.segment.uri} was deleted {lifetime:.3f} s after leaving the "
                               f"playlist; it must stay {removal.retention:.3f} s")

    def retention_pending(self):
        """A removed segment is still on disk and its retention time has not passed."""
        now = self.now()
        return any(r.gone_at is None and now < r.left_at + r.retention + self.slack for r in self.removals)

    def concatenate(self):
        """COPY/stream.mp4: the map, then every segment in order; a gap in the numbers is a violation."""
        if not self.copied:
            return None
        sequences = sorted(self.copied)
        missing = sorted(set(range(sequences[0], sequences[-1] + 1)) - set(sequences))
        if missing:
            self.violation(f"segments {missing} were never seen complete; the copy has gaps")
        path = os.path.join(self.copy_dir, CONCATENATED)
        current_map = None
        with open(path, "wb") as out:
            for sequence in sequences:
                segment = self.copied[sequence]
                if segment.map_uri != current_map and segment.map_uri is not None:
                    current_map = segment.map_uri
                    with open(os.path.join(self.copy_dir, current_map), "rb") as file:
                        out.write(file.read())
                with open(os.path.join(self.copy_dir, segment.uri), "rb") as file:
                    out.write(file.read())
        return path

    def report(self):
        concatenated = self.concatenate()
        sequences = sorted(self.copied)
        return {
            "polls": self.polls,
            "versions": self.versions,
            "segments": len(sequences),
            "firstSequence": sequences[0] if sequences else None,
            "lastSequence": sequences[-1] if sequences else None,
            "targetDuration": self.target,
            "endList": self.end_list,
            "removals": [{"uri": r.segment.uri, "leftAt": r.left_at, "goneAt": r.gone_at,
                          "retention": round(r.retention, 3)} for r in self.removals],
            "concatenated": concatenated,
            "violations": self.violations,
        }


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory")
    parser.add_argument("--report", required=True)
    parser.add_argument("--copy-dir", required=True)
    parser.add_argument("--interval", type=float, default=0.05)
    parser.add_argument("--timeout", type=float, default=600)
    args = parser.parse_args(argv)
    # A parent may start us with signals blocked (Foundation's Process does); SIGTERM must stop us.
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    os.makedirs(args.copy_dir, exist_ok=True)
    poller = Poller(args.directory, args.copy_dir, args.interval)
    deadline = time.monotonic() + args.timeout
    while not stopping and time.monotonic() < deadline:
        if poller.end_list:
            # The stream is over, but segments it dropped must stay downloadable a while longer.
            poller.watch_removed()
            if not poller.retention_pending():
                break
        else:
            poller.poll()
        time.sleep(args.interval)
    if not poller.end_list:
        poller.violation("the playlist never got EXT-X-ENDLIST")
    report = poller.report()
    with open(args.report, "w") as file:
        json.dump(report, file, indent=1)
    print(json.dumps(report), flush=True)
    return 0 if report["endList"] and not report["violations"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
