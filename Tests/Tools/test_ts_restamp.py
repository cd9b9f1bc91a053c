"""Tests of ts_restamp.py on the MPEG-TS fixture."""
import os
import subprocess
import sys
import tempfile
import unittest

TOOLS = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(TOOLS, "..", "..", "Fixtures", "h264-aac.ts")
HEVC_FIXTURE = os.path.join(TOOLS, "..", "..", "Fixtures", "hevc-hlg.ts")
sys.path.insert(0, TOOLS)
import ts_restamp  # noqa: E402


def fixture(path=FIXTURE):
    with open(path, "rb") as file:
        return bytearray(file.read())


def packet_times(data):
    """(pts, dts) of every video packet, as ffprobe reads them."""
    with tempfile.NamedTemporaryFile(suffix=".ts") as file:
        file.write(data)
        file.flush()
        rows = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v", "-show_entries",
                               "packet=pts,dts", "-of", "csv=p=0", file.name],
                              capture_output=True, text=True, check=True).stdout.split()
    return [tuple(int(value) for value in row.split(",")[:2]) for row in rows]


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

    def test_keep_dts_changes_only_the_composition_time(self):
        # The HEVC fixture has B-frames, so its PES headers carry a DTS as well.
        data = fixture(HEVC_FIXTURE)
        before = packet_times(data)
        ts_restamp.restamp(data, "video", 20, 5967.5, keep_dts=True)
        after = packet_times(data)
        self.assertEqual([dts for _, dts in after], [dts for _, dts in before])
        changed = [index for index, (old, new) in enumerate(zip(before, after)) if old != new]
        self.assertEqual(changed, [20])
        self.assertEqual(after[20][0], round(5967.5 * ts_restamp.CLOCK))


if __name__ == "__main__":
    unittest.main()
