"""Tests of the end-to-end checkers against ffmpeg-made fMP4 HLS streams, intact and broken."""
import array
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import urllib.request

TOOLS = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(TOOLS, "..", "..", "Fixtures", "h264-aac.mp4")
sys.path.insert(0, TOOLS)
import serve  # noqa: E402

SEGMENT = "seg/000002.m4s"
LAST_SEGMENT = "seg/000004.m4s"


def package_with_ffmpeg(directory):
    """fMP4 HLS in hlscap's layout: playlist.m3u8, init.mp4, seg/000001.m4s…"""
    os.makedirs(os.path.join(directory, "seg"))
    subprocess.run(
        ["ffmpeg", "-nostdin", "-v", "error", "-i", FIXTURE, "-c", "copy", "-f", "hls",
         "-hls_segment_type", "fmp4", "-hls_time", "1", "-hls_playlist_type", "vod",
         "-hls_fmp4_init_filename", "init.mp4", "-start_number", "1", "-hls_base_url", "seg/",
         "-hls_segment_filename", os.path.join(directory, "seg", "%06d.m4s"),
         os.path.join(directory, "playlist.m3u8")],
        check=True,
    )


def chromium_play(directory):
    result = subprocess.run(
        [sys.executable, os.path.join(TOOLS, "chromium_play.py"), "--dir", directory, "--timeout", "30"],
        capture_output=True, text=True, timeout=90,
    )
    return result.returncode, json.loads(result.stdout.splitlines()[-1])


class CheckerTests(unittest.TestCase):
    def setUp(self):
        self.directory = tempfile.mkdtemp(prefix="checker-test-")
        package_with_ffmpeg(self.directory)

    def tearDown(self):
        shutil.rmtree(self.directory)

    def test_serve_sends_hls_types_and_headers(self):
        server = serve.start_in_background(self.directory)
        base = f"http://127.0.0.1:{server.server_address[1]}/"
        try:
            expected = {
                "playlist.m3u8": "application/vnd.apple.mpegurl",
                "init.mp4": "video/mp4",
                SEGMENT: "video/iso.segment",
                serve.PLAYER_PATH.lstrip("/") + "?src=playlist.m3u8": "text/html; charset=utf-8",
            }
            for path, content_type in expected.items():
                with urllib.request.urlopen(base + path) as reply:
                    self.assertEqual(reply.headers["Content-Type"], content_type, path)
                    self.assertEqual(reply.headers["Access-Control-Allow-Origin"], "*", path)
                    no_cache = reply.headers["Cache-Control"] == "no-cache"
                    self.assertEqual(no_cache, path.split("?")[0].endswith(".m3u8"), path)
        finally:
            server.shutdown()
            server.server_close()

    def test_intact_stream_plays_to_the_end(self):
        status, report = chromium_play(self.directory)
        self.assertEqual(status, 0, report)
        self.assertTrue(report["ended"], report)
        self.assertEqual(report["videoWidth"], 320, report)
        self.assertAlmostEqual(report["playlistDuration"], 4.0, delta=0.1)

    def truncate(self, relative_path):
        path = os.path.join(self.directory, relative_path)
        with open(path, "r+b") as segment:
            segment.truncate(os.path.getsize(path) // 3)

    def test_truncated_segment_fails(self):
        self.truncate(SEGMENT)
        status, report = chromium_play(self.directory)
        self.assertEqual(status, 1, report)

    def test_truncated_last_segment_fails(self):
        # Chromium ends such a stream early without an error; only the playlist's length tells.
        self.truncate(LAST_SEGMENT)
        status, report = chromium_play(self.directory)
        self.assertEqual(status, 1, report)
        self.assertLess(report["currentTime"], report["playlistDuration"] - 0.5, report)

    def test_missing_init_fails(self):
        os.remove(os.path.join(self.directory, "init.mp4"))
        status, report = chromium_play(self.directory)
        self.assertEqual(status, 1, report)
        self.assertIsNotNone(report["error"], report)


class AVSyncTests(unittest.TestCase):
    """av_sync.py must pass the in-sync fixture and fail the same clip with its audio shifted."""
    SOURCE = os.path.join(TOOLS, "..", "..", "Fixtures", "flash-beep.mp4")

    def measure(self, path):
        result = subprocess.run([sys.executable, os.path.join(TOOLS, "av_sync.py"), path],
                                capture_output=True, text=True, timeout=120)
        return result.returncode, json.loads(result.stdout.splitlines()[-1])

    def test_in_sync_clip_passes(self):
        status, report = self.measure(self.SOURCE)
        self.assertEqual(status, 0, report)
        self.assertGreaterEqual(report["pairs"], 4)
        self.assertLessEqual(report["max_abs_offset_ms"], 1.0)

    def test_a_join_overlap_burst_is_not_a_beep(self):
        # What a copied AAC join decodes to when the sound past the cut was a beep: 20 ms of it, 25 ms
        # of quiet, then the next part's beep. Only the beep is an onset.
        sys.path.insert(0, TOOLS)
        import av_sync
        rate = av_sync.SAMPLE_RATE
        tone = lambda seconds: [int(16000 * math.sin(2 * math.pi * 1000 * i / rate)) for i in range(int(seconds * rate))]
        quiet = lambda seconds: [0] * int(seconds * rate)
        samples = array.array("h", quiet(0.3) + tone(0.02) + quiet(0.025) + tone(0.05) + quiet(0.3))
        beep = int(0.345 * rate)
        for case in (samples, array.array("h", quiet(0.345) + tone(0.05) + quiet(0.3))):
            found = av_sync.onsets(case)
            self.assertEqual(len(found), 1, found)
            self.assertLess(abs(found[0] - beep), rate // 1000, found)

    def test_audio_shifted_by_40_ms_fails(self):
        directory = tempfile.mkdtemp(prefix="av-sync-test-")
        try:
            shifted = os.path.join(directory, "shifted.mp4")
            subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-i", self.SOURCE, "-itsoffset", "0.04",
                            "-i", self.SOURCE, "-map", "0:v", "-map", "1:a", "-c", "copy", shifted], check=True)
            status, report = self.measure(shifted)
            self.assertEqual(status, 1, report)
            self.assertTrue(all(35 <= offset <= 45 for offset in report["offsets_ms"]), report)
        finally:
            shutil.rmtree(directory)


class GStreamerDecodeTests(unittest.TestCase):
    """gst_decode.py must count every frame of an intact stream and report less for a damaged one."""
    FRAMES = 100  # h264-aac.mp4: 4 s at 25 fps

    def setUp(self):
        self.directory = tempfile.mkdtemp(prefix="gst-decode-test-")
        package_with_ffmpeg(self.directory)

    def tearDown(self):
        shutil.rmtree(self.directory)

    def decode(self):
        result = subprocess.run([sys.executable, os.path.join(TOOLS, "gst_decode.py"), self.directory,
                                 "--timeout", "30"], capture_output=True, text=True, timeout=90)
        return result.returncode, json.loads(result.stdout.splitlines()[-1])

    def test_intact_stream_decodes_every_frame(self):
        status, report = self.decode()
        self.assertEqual(status, 0, report)
        self.assertEqual(report["video_frames"], self.FRAMES, report)
        self.assertAlmostEqual(report["audio_seconds"], 4.0, delta=0.05)

    def test_damaged_samples_decode_short(self):
        path = os.path.join(self.directory, SEGMENT)
        with open(path, "r+b") as segment:
            data = bytearray(segment.read())
            start = data.find(b"mdat") + 400
            data[start::7] = b"\xff" * len(data[start::7])
            segment.seek(0)
            segment.write(data)
        status, report = self.decode()
        self.assertTrue(status != 0 or report["video_frames"] < self.FRAMES, report)

    def test_missing_init_fails(self):
        os.remove(os.path.join(self.directory, "init.mp4"))
        status, report = self.decode()
        self.assertEqual(status, 1, report)


if __name__ == "__main__":
    unittest.main()
