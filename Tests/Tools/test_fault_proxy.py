"""Tests of fault_proxy.py's choice of requests to fail."""
import argparse
import os
import sys
import unittest

TOOLS = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, TOOLS)
import fault_proxy  # noqa: E402


def plan(**overrides):
    options = {"fail_share": 1.0, "seed": 1, "outage": [], "methods": "PUT,DELETE", "paths": ""}
    options.update(overrides)
    return fault_proxy.FaultPlan(argparse.Namespace(**options))


class FaultPlanTests(unittest.TestCase):
    def test_every_upload_can_fail_by_default(self):
        chosen = plan()
        self.assertIn(chosen.fault_for("PUT", "/live/seg/000001.m4s"), fault_proxy.FAULTS)
        self.assertIn(chosen.fault_for("PUT", "/live/playlist.m3u8"), fault_proxy.FAULTS)
        self.assertIsNone(chosen.fault_for("GET", "/live/playlist.m3u8"))

    def test_paths_limit_the_faults_to_matching_requests(self):
        chosen = plan(paths=r"\.m3u8$")
        self.assertIn(chosen.fault_for("PUT", "/live/playlist.m3u8"), fault_proxy.FAULTS)
        self.assertIsNone(chosen.fault_for("PUT", "/live/seg/000001.m4s"))
        self.assertIsNone(chosen.fault_for("DELETE", "/live/seg/000001.m4s"))


if __name__ == "__main__":
    unittest.main()
