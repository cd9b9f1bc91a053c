"""Tests of origin_poller.py's sliding-window mode against a local HTTP server."""
import functools
import http.server
import os
import sys
import tempfile
import threading
import unittest

TOOLS = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, TOOLS)
import origin_poller  # noqa: E402


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def playlist(first, last, end_list=False):
    lines = ["#EXTM3U", "#EXT-X-TARGETDURATION:2", f"#EXT-X-MEDIA-SEQUENCE:{first}",
             '#EXT-X-MAP:URI="init.mp4"']
    for number in range(first, last + 1):
        lines += ["#EXTINF:2.000,", f"seg/{number:06d}.m4s"]
    if end_list:
        lines.append("#EXT-X-ENDLIST")
    return "\n".join(lines) + "\n"


class SlidingPollerTests(unittest.TestCase):
    def setUp(self):
        self.directory = tempfile.mkdtemp()
        os.makedirs(os.path.join(self.directory, "seg"))
        self.write("init.mp4", "init")
        for number in range(1, 8):
            self.write(f"seg/{number:06d}.m4s", "media")
        handler = functools.partial(QuietHandler, directory=self.directory)
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/playlist.m3u8"

    def tearDown(self):
        self.server.shutdown()
        self.server.server_close()

    def write(self, path, text):
        with open(os.path.join(self.directory, path), "w") as file:
            file.write(text)

    def test_a_window_that_slides_forward_is_safe(self):
        poller = origin_poller.Poller(self.url, sliding=True)
        for first, last in [(1, 3), (2, 4), (4, 6), (5, 7)]:
            self.write("playlist.m3u8", playlist(first, last, end_list=last == 7))
            poller.poll()
        self.assertEqual(poller.report["violations"], [])
        self.assertEqual(poller.report["segmentsSeen"], 7)
        self.assertTrue(poller.report["endList"])

    def test_deleting_a_segment_the_playlist_still_lists_is_caught(self):
        poller = origin_poller.Poller(self.url, sliding=True)
        self.write("playlist.m3u8", playlist(2, 4))
        poller.poll()
        os.remove(os.path.join(self.directory, "seg/000002.m4s"))
        poller.poll()
        self.assertEqual(poller.report["violations"],
                         ["version 1 still lists seg/000002.m4s, which now answered 404"])

    def test_going_back_or_rewriting_the_window_is_caught(self):
        poller = origin_poller.Poller(self.url, sliding=True)
        self.write("playlist.m3u8", playlist(3, 5))
        poller.poll()
        self.write("playlist.m3u8", playlist(2, 6))
        poller.poll()
        self.assertIn("version 2 goes back to media sequence 2", poller.report["violations"])

    def test_without_sliding_a_dropped_head_is_a_violation(self):
        poller = origin_poller.Poller(self.url)
        self.write("playlist.m3u8", playlist(1, 3))
        poller.poll()
        self.write("playlist.m3u8", playlist(2, 4))
        poller.poll()
        self.assertEqual(poller.report["violations"], ["version 2 does not extend the previous one"])

    def test_a_key_the_origin_does_not_serve_is_a_violation(self):
        poller = origin_poller.Poller(self.url)
        text = playlist(1, 2).replace("#EXTINF", '#EXT-X-KEY:METHOD=AES-128,URI="keys/a.key"\n#EXTINF', 1)
        self.write("playlist.m3u8", text)
        poller.poll()
        self.assertEqual(poller.report["violations"], ["version 1 lists keys/a.key, which answered 404"])
        os.makedirs(os.path.join(self.directory, "keys"))
        self.write("keys/a.key", "0123456789abcdef")
        self.write("playlist.m3u8", text + "#EXTINF:2.000,\nseg/000003.m4s\n")
        poller.poll()
        self.assertEqual(len(poller.report["violations"]), 1)


if __name__ == "__main__":
    unittest.main()
