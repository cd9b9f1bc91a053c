#!/usr/bin/env python3
"""Decodes an HLS output directory with GStreamer (playbin3, hlsdemux) and counts what came out.

Usage: gst_decode.py (DIR | --url URL) [--timeout SECONDS]

GStreamer's HLS demuxer fetches segments over HTTP only, so DIR is served with serve.py on a free
loopback port; --url decodes a playlist another server serves (a live one is decoded until its
EXT-X-ENDLIST). Every video frame is scaled to a tiny gray picture and every audio sample converted
to mono 48 kHz, both written to files whose sizes give the counts. Prints one JSON line:
{"video_frames", "audio_seconds", "problems", "attempts"}. Exit status 0 when gst-launch reached the end without
an error or warning and decoded something, 1 otherwise.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

TOOLS = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, TOOLS)
import serve  # noqa: E402

FRAME_SIDE = 16               # each decoded picture becomes 16x16 GRAY8: 256 bytes
AUDIO_RATE = 48000
AUDIO_BYTES_PER_SAMPLE = 2    # S16LE mono
# GStreamer 1.22.0's hlsdemux2 sometimes fails a short stream fetched at loopback speed: it reaches the
# playlist's end before exposing its pads ("Can't push EOS on non-exposed pad"), then reports this. A
# stream that is really broken fails every attempt.
RACE_SIGNATURE = "Couldn't download fragments"
ATTEMPTS = 5


def decode(url, work, timeout):
    video_path = os.path.join(work, "video.raw")
    audio_path = os.path.join(work, "audio.raw")
    video_sink = (f"videoconvert ! videoscale ! video/x-raw,format=GRAY8,width={FRAME_SIDE},height={FRAME_SIDE} "
                  f"! filesink sync=false location={video_path}")
    audio_sink = (f"audioconvert ! audioresample ! audio/x-raw,format=S16LE,channels=1,rate={AUDIO_RATE} "
                  f"! filesink sync=false location={audio_path}")
    command = ["gst-launch-1.0", "playbin3", f"uri={url}", f"video-sink={video_sink}", f"audio-sink={audio_sink}"]
    try:
        result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                timeout=timeout)
        output, status = result.stdout, result.returncode
    except subprocess.TimeoutExpired:
        output, status = "timed out", None
    # gst-launch exits 0 on EOS even when an element posted warnings (a decoder skipping bad data).
    problems = [line.strip() for line in output.splitlines() if line.startswith(("ERROR", "WARNING"))]
    if status != 0:
        problems.append(f"gst-launch-1.0 exit status {status}: {output.strip()[-500:]}")
    video_bytes = os.path.getsize(video_path) if os.path.exists(video_path) else 0
    audio_bytes = os.path.getsize(audio_path) if os.path.exists(audio_path) else 0
    return {
        "video_frames": video_bytes // (FRAME_SIDE * FRAME_SIDE),
        "audio_seconds": round(audio_bytes / AUDIO_BYTES_PER_SAMPLE / AUDIO_RATE, 4),
        "problems": problems,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", nargs="?")
    parser.add_argument("--url")
    parser.add_argument("--timeout", type=float, default=60)
    arguments = parser.parse_args()
    if shutil.which("gst-launch-1.0") is None:
        print(json.dumps({"problems": ["gst-launch-1.0 is not installed; run `make deps`"]}))
        return 1
    if (arguments.dir is None) == (arguments.url is None):
        parser.error("give DIR or --url URL")
    server = serve.start_in_background(arguments.dir) if arguments.dir else None
    work = tempfile.mkdtemp(prefix="gst-decode-")
    try:
        url = arguments.url or f"http://127.0.0.1:{server.server_address[1]}/playlist.m3u8"
        for attempt in range(1, ATTEMPTS + 1):
            for name in os.listdir(work):
                os.remove(os.path.join(work, name))
            report = decode(url, work, arguments.timeout)
            report["attempts"] = attempt
            if not any(RACE_SIGNATURE in problem for problem in report["problems"]):
                break
    finally:
        if server:
            server.shutdown()
            server.server_close()
        shutil.rmtree(work)
    print(json.dumps(report))
    decoded = report["video_frames"] > 0 or report["audio_seconds"] > 0
    return 0 if decoded and not report["problems"] else 1


if __name__ == "__main__":
    sys.exit(main())
