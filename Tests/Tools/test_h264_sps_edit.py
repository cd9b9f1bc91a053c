"""Tests of h264_sps_edit.py on the fixture's H.264 elementary stream."""
import os
import subprocess
import sys
import tempfile
import unittest

TOOLS = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(TOOLS, "..", "..", "Fixtures", "h264-aac.ts")
sys.path.insert(0, TOOLS)
import h264_sps_edit  # noqa: E402


def elementary_stream():
    return subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-i", FIXTURE, "-map", "0:v", "-c", "copy",
                           "-f", "h264", "-"], check=True, capture_output=True).stdout


def decoded_size(stream):
    with tempfile.NamedTemporaryFile(suffix=".h264") as file:
        file.write(stream)
        file.flush()
        result = subprocess.run(["ffprobe", "-v", "quiet", "-show_entries", "stream=width,height", "-of",
                                 "csv=p=0", file.name], capture_output=True, text=True)
    return result.stdout.strip()


class SPSEditTests(unittest.TestCase):
    def test_the_same_size_gives_the_same_bytes(self):
        stream = elementary_stream()
        edited, count = h264_sps_edit.edit(stream, 320, 240, first_only=False)
        self.assertEqual(count, 4)
        self.assertEqual(edited, stream)

    def test_a_new_size_is_what_a_decoder_reads(self):
        edited, _ = h264_sps_edit.edit(elementary_stream(), 640, 480, first_only=False)
        self.assertEqual(decoded_size(edited), "640,480")

    def test_first_only_leaves_the_later_sets_alone(self):
        stream = elementary_stream()
        edited, count = h264_sps_edit.edit(stream, 640, 480, first_only=True)
        self.assertEqual(count, 1)
        self.assertNotEqual(edited, stream)
        second_sps = stream.index(b"\x00\x00\x01\x67", stream.index(b"\x00\x00\x01\x67") + 4)
        self.assertTrue(edited.endswith(stream[second_sps:]))

    def test_an_unchanged_size_with_nothing_else_keeps_the_bytes(self):
        stream = elementary_stream()
        edited, count = h264_sps_edit.edit(stream, sps_id=0)
        self.assertEqual(count, 4)
        self.assertEqual(edited, stream)

    def test_an_sps_id_out_of_range_makes_every_picture_undecodable(self):
        edited, _ = h264_sps_edit.edit(elementary_stream(), sps_id=40)
        self.assertEqual(decoded_frames(edited), 0)

    def test_a_reserved_aspect_ratio_is_refused_by_a_decoder(self):
        stream = elementary_stream()
        edited, _ = h264_sps_edit.edit(stream, aspect_ratio_idc=100, only=2)
        # The second of four GOPs has no SPS a decoder takes; it keeps the first one's and decodes on.
        self.assertNotEqual(edited, stream)
        self.assertIn(b"illegal aspect ratio", decoder_log(edited))

    def test_only_edits_the_nth_sps(self):
        stream = elementary_stream()
        edited, count = h264_sps_edit.edit(stream, sps_id=7, only=3)
        self.assertEqual(count, 1)
        first = stream.index(b"\x00\x00\x01\x67")
        second = stream.index(b"\x00\x00\x01\x67", first + 4)
        self.assertTrue(edited.startswith(stream[:stream.index(b"\x00\x00\x01\x67", second + 4)]))


def decoded_frames(stream):
    with tempfile.NamedTemporaryFile(suffix=".h264") as file:
        file.write(stream)
        file.flush()
        result = subprocess.run(["ffprobe", "-v", "quiet", "-count_frames", "-select_streams", "v:0",
                                 "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0", file.name],
                                capture_output=True, text=True)
    count = result.stdout.strip()
    return int(count) if count.isdigit() else 0


def decoder_log(stream):
    with tempfile.NamedTemporaryFile(suffix=".h264") as file:
        file.write(stream)
        file.flush()
        return subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-i", file.name, "-f", "null", "-"],
                              capture_output=True).stderr


if __name__ == "__main__":
    unittest.main()
