"""nginx_process: the nginx a tool starts stops with the tool, even when the tool is killed."""
import os
import subprocess
import sys
import tempfile
import time
import unittest

TOOLS = os.path.dirname(os.path.abspath(__file__))


def running(pid):
    """Whether `pid` runs (a zombie left for a parent that does not reap it does not)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


class NginxProcessTests(unittest.TestCase):
    def test_nginx_stops_when_its_tool_is_killed(self):
        with tempfile.TemporaryDirectory() as logs:
            tool = subprocess.Popen([sys.executable, os.path.join(TOOLS, "cdn_edge.py"), "--upstream", "9",
                                     "--logs", logs], stdout=subprocess.PIPE, text=True)
            try:
                announced = tool.stdout.readline()
                self.assertTrue(announced.startswith("edge http://127.0.0.1:"), announced)
                with open(os.path.join(logs, "nginx.pid")) as pid_file:
                    nginx = int(pid_file.read())
                self.assertTrue(running(nginx))
            finally:
                tool.kill()
                tool.wait()
            deadline = time.monotonic() + 10
            while running(nginx) and time.monotonic() < deadline:
                time.sleep(0.05)
            self.assertFalse(running(nginx), "nginx outlived the killed tool")


if __name__ == "__main__":
    unittest.main()
