#!/usr/bin/env python3
"""Many cameras into one bucket: N `hlscap live` processes publishing to one Ceph RADOS Gateway.

Usage: s3_fleet.py --hlscap PATH [--cameras N] [--seconds S] [--size WxH] [--directory DIR]

Starts a gateway (s3_gateway.py's cluster), creates the bucket "fleet", and runs N live streams of
the test source at once, each publishing to s3://fleet/camK/ with no local copy (--publish alone),
for S seconds. Then reads each one's summary (segments, dropped frames; listed-after-writing and
PUT times, p50 and p99), its CPU time and peak memory (GNU time), the gateway's own CPU time and
memory, and checks with boto3 that every camera's playlist is on the store with ENDLIST and names
only stored objects. Prints a table, then one JSON line; exits 1 when a stream failed or is
incomplete on the store. Needs boto3 (run it with .build/python/bin/python3).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import s3_check  # noqa: E402
import s3_gateway  # noqa: E402

ACCESS_KEY, SECRET_KEY, BUCKET = "FLEETKEY", "fleet-secret", "fleet"
SUMMARY = re.compile(r"listed (\d+) ms after writing \(p50\), p99 (\d+) ms; PUT (\d+) ms \(p50\), p99 (\d+) ms")
STREAM = re.compile(r"(\d+) segments, .* (\d+) frames, (\d+) dropped")
TIME_FORMAT = "time: %U %S %M"
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def gateway_usage(cluster):
    """CPU seconds and resident kB of the cluster's daemons, from /proc."""
    run_dir = os.path.join(cluster.c, "run")
    cpu, rss = 0.0, 0
    for name in os.listdir(run_dir):
        if not name.endswith(".pid"):
            continue
        try:
            pid = open(os.path.join(run_dir, name)).read().strip()
            fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
            cpu += (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
            rss += int(fields[21]) * os.sysconf("SC_PAGE_SIZE") // 1024
        except (OSError, ValueError):
            pass
    return cpu, rss


def quantile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(fraction * len(ordered) + 0.999999) - 1))] if ordered else 0


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hlscap", required=True)
    parser.add_argument("--cameras", type=int, default=8)
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--size", default="320x180")
    parser.add_argument("--directory")
    args = parser.parse_args(argv)
    directory = args.directory or tempfile.mkdtemp(prefix="s3-fleet-")
    cluster = s3_gateway.Cluster(os.path.join(directory, "ceph"), s3_gateway.free_port())
    cluster.start(ACCESS_KEY, SECRET_KEY)
    endpoint = f"http://127.0.0.1:{cluster.port}"
    environment = dict(os.environ, AWS_ACCESS_KEY_ID=ACCESS_KEY, AWS_SECRET_ACCESS_KEY=SECRET_KEY)
    os.environ.update(AWS_ACCESS_KEY_ID=ACCESS_KEY, AWS_SECRET_ACCESS_KEY=SECRET_KEY)
    s3 = s3_check.client(endpoint + "/")
    s3.create_bucket(Bucket=BUCKET)
    try:
        gateway_cpu_before, _ = gateway_usage(cluster)
        processes = []
        started = time.monotonic()
        for camera in range(1, args.cameras + 1):
            command = ["/usr/bin/time", "-f", TIME_FORMAT, args.hlscap, "live", "--video", "test", "--audio", "test",
                       "--size", args.size, "--duration", str(args.seconds), "--quiet",
                       "--publish", f"s3://{BUCKET}/cam{camera}/", "--s3-endpoint", endpoint]
            processes.append(subprocess.Popen(command, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                              text=True))
        peak_gateway_rss = 0
        while any(process.poll() is None for process in processes):
            peak_gateway_rss = max(peak_gateway_rss, gateway_usage(cluster)[1])
            time.sleep(1)
        wall = time.monotonic() - started
        gateway_cpu = gateway_usage(cluster)[0] - gateway_cpu_before
        cameras, failures = [], []
        for camera, process in enumerate(processes, start=1):
            stdout, stderr = process.communicate()
            summary, stream = SUMMARY.search(stdout), STREAM.search(stdout)
            usage = re.search(r"time: ([\d.]+) ([\d.]+) (\d+)", stderr)
            problems = s3_check.check(s3, endpoint + "/", BUCKET, f"cam{camera}/", "no-cache", False)["problems"]
            _, body = s3_check.get(s3, BUCKET, f"cam{camera}/playlist.m3u8")
            if process.returncode != 0 or not summary or not stream or not usage or problems \
                    or b"#EXT-X-ENDLIST" not in body:
                failures.append({"camera": camera, "exit": process.returncode, "stderr": stderr[-400:],
                                 "problems": problems[:5]})
                continue
            cameras.append({"camera": camera, "segments": int(stream.group(1)), "dropped": int(stream.group(3)),
                            "listedP50": int(summary.group(1)), "listedP99": int(summary.group(2)),
                            "putP50": int(summary.group(3)), "putP99": int(summary.group(4)),
                            "cores": (float(usage.group(1)) + float(usage.group(2))) / args.seconds,
                            "peakKB": int(usage.group(3))})
        report = {"cameras": args.cameras, "seconds": args.seconds, "size": args.size, "wallSeconds": round(wall, 1),
                  "failures": failures, "perCamera": cameras,
                  "gatewayCores": round(gateway_cpu / args.seconds, 3), "gatewayPeakKB": peak_gateway_rss}
        if cameras:
            report["summary"] = {
                "putP50": quantile([c["putP50"] for c in cameras], 0.5),
                "putP99Worst": max(c["putP99"] for c in cameras),
                "listedP50": quantile([c["listedP50"] for c in cameras], 0.5),
                "listedP99Worst": max(c["listedP99"] for c in cameras),
                "coresPerCamera": round(sum(c["cores"] for c in cameras) / len(cameras), 3),
                "peakKBPerCamera": int(sum(c["peakKB"] for c in cameras) / len(cameras)),
                "droppedFrames": sum(c["dropped"] for c in cameras),
            }
        print(f"{'camera':>6} {'segs':>5} {'drop':>5} {'PUT p50':>8} {'PUT p99':>8} {'listed p50':>10} "
              f"{'listed p99':>10} {'cores':>6} {'peak MB':>8}")
        for c in cameras:
            print(f"{c['camera']:>6} {c['segments']:>5} {c['dropped']:>5} {c['putP50']:>6}ms {c['putP99']:>6}ms "
                  f"{c['listedP50']:>8}ms {c['listedP99']:>8}ms {c['cores']:>6.3f} {c['peakKB'] / 1024:>8.1f}")
        print(f"gateway (mon + osd + radosgw): {report['gatewayCores']:.3f} cores, peak {peak_gateway_rss / 1024:.0f} MB")
        print(json.dumps(report), flush=True)
        return 1 if failures or not cameras else 0
    finally:
        cluster.stop()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
