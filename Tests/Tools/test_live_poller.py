"""Tests of live_poller.py against a scripted writer that breaks one rule at a time."""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time
import unittest

TOOLS = os.path.dirname(os.path.abspath(__file__))
POLL_SECONDS = 0.02
# Time between the scripted writer's steps: several polls, so the poller sees every version.
STEP_SECONDS = 0.15
SEGMENT_SECONDS = 0.2
WINDOW = 2
# RFC 8216bis 6.2.2: the segment's duration plus that of the longest playlist holding it.
RETENTION_SECONDS = SEGMENT_SECONDS * (1 + WINDOW)


def box(kind, payload):
    return struct.pack(">I4s", 8 + len(payload), kind) + payload


INIT = box(b"ftyp", b"iso6\0\0\0\0") + box(b"moov", box(b"mvhd", bytes(100)))


def segment_bytes(sequence):
    return (box(b"styp", b"msdh\0\0\0\0") + box(b"moof", box(b"mfhd", struct.pack(">II", 0, sequence)))
            + box(b"mdat", bytes([sequence % 256]) * 1000))


class ScriptedStream:
    """Writes a live stream the way hlscap does (segment, then playlist, each renamed into place),
    with hooks to break it."""

    def __init__(self, directory):
        self.directory = directory
        self.target = 1
        self.media_sequence = 1
        self.segments = []
        self.end_list = False
        os.makedirs(os.path.join(directory, "seg"))
        self.write("init.mp4", INIT)

    def write(self, name, data):
        path = os.path.join(self.directory, name)
        with open(path + ".tmp", "wb") as file:
            file.write(data)
        os.rename(path + ".tmp", path)

    def uri(self, sequence):
        return f"seg/{sequence:06d}.m4s"

    def render(self):
        lines = ["#EXTM3U", "#EXT-X-VERSION:6", f"#EXT-X-TARGETDURATION:{self.target}",
                 f"#EXT-X-MEDIA-SEQUENCE:{self.media_sequence}", '#EXT-X-MAP:URI="init.mp4"']
        for sequence in self.segments:
            lines += [f"#EXTINF:{SEGMENT_SECONDS:.3f},", self.uri(sequence)]
        if self.end_list:
            lines.append("#EXT-X-ENDLIST")
        return "\n".join(lines) + "\n"

    def publish(self):
        self.write("playlist.m3u8", self.render().encode())

    def add(self, sequence, data=None):
        """Stores and lists one segment; slides the window; returns the segments that left it."""
        self.write(self.uri(sequence), data if data is not None else segment_bytes(sequence))
        self.segments.append(sequence)
        left = []
        while len(self.segments) > WINDOW:
            left.append(self.segments.pop(0))
            self.media_sequence += 1
        self.publish()
        return left

    def delete(self, sequence):
        os.remove(os.path.join(self.directory, self.uri(sequence)))


class LivePollerTests(unittest.TestCase):
    def setUp(self):
        self.directory = tempfile.mkdtemp(prefix="live-poller-test-")
        self.stream_dir = os.path.join(self.directory, "stream")
        self.stream = ScriptedStream(self.stream_dir)

    def tearDown(self):
        shutil.rmtree(self.directory)

    def run_poller(self, script):
        """Runs the poller while `script(stream)` writes; returns (exit status, report)."""
        report_path = os.path.join(self.directory, "report.json")
        poller = subprocess.Popen(
            [sys.executable, os.path.join(TOOLS, "live_poller.py"), self.stream_dir, "--report", report_path,
             "--copy-dir", os.path.join(self.directory, "copy"), "--interval", str(POLL_SECONDS),
             "--timeout", "20"],
            stdout=subprocess.PIPE, text=True)
        writer = threading.Thread(target=script, args=(self.stream,))
        writer.start()
        writer.join()
        output, _ = poller.communicate(timeout=30)
        with open(report_path) as file:
            report = json.load(file)
        self.assertEqual(json.loads(output), report)
        return poller.returncode, report

    def assert_reported(self, script, complaint):
        status, report = self.run_poller(script)
        self.assertEqual(status, 1, report)
        self.assertTrue(any(complaint in v for v in report["violations"]), report["violations"])

    def test_a_correct_stream_passes_and_is_copied_whole(self):
        def script(stream):
            pending = []
            for sequence in range(1, 7):
                pending += [(sequence, time.monotonic()) for sequence in stream.add(sequence)]
                time.sleep(STEP_SECONDS)
                for left, at in list(pending):
                    if time.monotonic() - at > RETENTION_SECONDS + STEP_SECONDS:
                        stream.delete(left)
                        pending.remove((left, at))
            stream.end_list = True
            stream.publish()

        status, report = self.run_poller(script)
        self.assertEqual(status, 0, report)
        self.assertEqual((report["segments"], report["firstSequence"], report["lastSequence"]), (6, 1, 6))
        self.assertEqual(len(report["removals"]), 4, report)
        with open(report["concatenated"], "rb") as file:
            self.assertEqual(file.read(), INIT + b"".join(segment_bytes(n) for n in range(1, 7)))

    def test_a_listed_truncated_segment_is_reported(self):
        def script(stream):
            stream.add(1)
            time.sleep(STEP_SECONDS)
            stream.add(2, segment_bytes(2)[:-10])
            time.sleep(STEP_SECONDS)
            stream.end_list = True
            stream.publish()

        self.assert_reported(script, "lists seg/000002.m4s, which ends inside its mdat box")

    def test_a_sequence_going_back_is_reported(self):
        def script(stream):
            for sequence in range(1, 5):
                stream.add(sequence)
                time.sleep(STEP_SECONDS)
            stream.media_sequence -= 1
            stream.segments.insert(0, stream.segments[0] - 1)
            stream.end_list = True
            stream.publish()

        self.assert_reported(script, "EXT-X-MEDIA-SEQUENCE went back from 3 to 2")

    def test_a_target_duration_change_is_reported(self):
        def script(stream):
            stream.add(1)
            time.sleep(STEP_SECONDS)
            stream.target = 2
            stream.add(2)
            time.sleep(STEP_SECONDS)
            stream.end_list = True
            stream.publish()

        self.assert_reported(script, "EXT-X-TARGETDURATION changed from 1 to 2")

    def test_a_segment_deleted_before_its_retention_time_is_reported(self):
        def script(stream):
            for sequence in range(1, 4):
                for left in stream.add(sequence):
                    stream.delete(left)
                time.sleep(STEP_SECONDS)
            stream.end_list = True
            stream.publish()

        self.assert_reported(script, "seg/000001.m4s was deleted")

    def test_a_deletion_right_after_endlist_is_reported(self):
        def script(stream):
            for sequence in range(1, 4):
                stream.add(sequence)
                time.sleep(STEP_SECONDS)
            stream.end_list = True
            stream.publish()
            time.sleep(STEP_SECONDS)
            stream.delete(1)

        self.assert_reported(script, "seg/000001.m4s was deleted")

    def test_a_playlist_cut_short_is_reported(self):
        def script(stream):
            stream.add(1)
            time.sleep(STEP_SECONDS)
            stream.write("playlist.m3u8", stream.render().encode().rsplit(b"seg/", 1)[0])
            time.sleep(STEP_SECONDS)
            stream.end_list = True
            stream.publish()

        self.assert_reported(script, "does not parse: EXTINF without a URI at the end")


if __name__ == "__main__":
    unittest.main()
