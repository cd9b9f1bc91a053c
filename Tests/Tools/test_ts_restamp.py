"""Tests of ts_restamp.py on the MPEG-TS fixture."""
import os
import subprocess
import sys
import tempfile
import unittest

TOOLS = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(TOOLS, "..", "..", "Fixtures", "h264-aac.ts")
sys.path.insert(0, TOOLS)
import ts_restamp  # noqa: E402


def fixture():
    with open(FIXTURE, "rb") as file:
        return bytearray(file.read())


class RestampTests(unittest.TestCase):
    def test_the_same_time_gives_the_same_bytes(self):
        data = fixture()
        old, _ = ts_restamp.restamp(bytearray(data), "video", 10, 0)
        unchanged = bytearray(data)
        ts_restamp.restamp(unchanged, "video", 10, old / ts_restamp.CLOCK)
        self.assertEqual(unchanged, data)

    def test_one_packet_gets_the_new_time(self):
        data = fixture()
        ts_restamp.restamp(data, "video", 50, 3219.9)
        with tempfile.NamedTemporaryFile(suffix=".ts") as file:
            file.write(data)
            file.flush()
            times = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v", "-show_entries",
                                    "packet=pts_time", "-of", "csv=p=0", file.name],
                                   capture_output=True, text=True, check=True).stdout.split()
        stamped = [float(time.strip(",")) for time in times if time.strip(",")]
        self.assertEqual(len(stamped), 100)
        self.assertEqual(sum(1 for time in stamped if time > 1000), 1)
        self.assertIn(3219.9, [round(time, 1) for time in stamped])


if __name__ == "__main__":
    unittest.main()
