#!/usr/bin/python3
"""A real RTSP server for the network-input tests: GStreamer's RTSP server (gst-rtsp-server through
PyGObject) serving live test streams, as an IP camera would.

    rtsp_server.py [--port N] [--size WxH] [--fps N] [--key-seconds S] [--stop-after S] [--file MP4]

Mounts, each a live videotestsrc (a moving ball) and audiotestsrc (a sine) encoded on the fly:
    /h264-aac   H.264 (x264enc) + AAC (avenc_aac), the common camera
    /h264-pcmu  H.264 + G.711 µ-law at 8 kHz mono, the common cheap camera
    /h264       H.264 alone
    /file       with --file, an MP4's H.264 and AAC as they are, in real time, from its start for each
                client (a camera that encodes nothing here: what a benchmark of the reader wants)

Prints "serving rtsp://127.0.0.1:PORT" once listening, then runs until SIGTERM or SIGINT, or
--stop-after seconds after the first client (a camera that goes away mid-stream). Needs Debian's
gir1.2-gst-rtsp-server-1.0, python3-gi and gstreamer1.0-plugins-ugly; run it with /usr/bin/python3,
whose gi module those packages serve.
"""
import argparse
import signal
import socket
import sys

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstRtspServer", "1.0")
from gi.repository import GLib, Gst, GstRtspServer  # noqa: E402


def video_branch(width, height, fps, key_frames):
    return (f"videotestsrc is-live=true pattern=ball ! video/x-raw,width={width},height={height},"
            f"framerate={fps}/1 ! x264enc tune=zerolatency speed-preset=ultrafast key-int-max={key_frames} "
            "bitrate=1500 ! video/x-h264,profile=baseline ! rtph264pay name=pay0 pt=96 config-interval=1")


AUDIO = {
    "aac": ("audiotestsrc is-live=true wave=sine freq=440 ! audio/x-raw,rate=48000,channels=2 ! "
            "audioconvert ! avenc_aac ! rtpmp4gpay name=pay1 pt=97"),
    "pcmu": ("audiotestsrc is-live=true wave=sine freq=440 ! audio/x-raw,rate=8000,channels=1 ! "
             "mulawenc ! rtppcmupay name=pay1 pt=0"),
}


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--size", default="640x360")
    parser.add_argument("--fps", type=int, default=30)
    parser.add_argument("--key-seconds", type=float, default=2.0)
    parser.add_argument("--stop-after", type=float, default=0)
    parser.add_argument("--file")
    options = parser.parse_args()
    width, height = (int(part) for part in options.size.split("x"))
    key_frames = max(1, int(round(options.key_seconds * options.fps)))

    # A parent may start us with signals blocked (Foundation's Process does); SIGTERM must stop us.
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    Gst.init(None)
    port = options.port or free_port()
    server = GstRtspServer.RTSPServer()
    server.set_address("127.0.0.1")
    server.set_service(str(port))
    mounts = server.get_mount_points()
    video = video_branch(width, height, options.fps, key_frames)
    for path, audio in (("/h264-aac", AUDIO["aac"]), ("/h264-pcmu", AUDIO["pcmu"]), ("/h264", None)):
        factory = GstRtspServer.RTSPMediaFactory()
        factory.set_launch("( " + video + (" " + audio if audio else "") + " )")
        # One encoding shared by every client, as a camera has.
        factory.set_shared(True)
        mounts.add_factory(path, factory)
    if options.file:
        factory = GstRtspServer.RTSPMediaFactory()
        factory.set_launch(
            f"( filesrc location={options.file} ! qtdemux name=d "
            "d.video_0 ! queue ! h264parse config-interval=-1 ! rtph264pay name=pay0 pt=96 "
            "d.audio_0 ! queue ! aacparse ! rtpmp4gpay name=pay1 pt=97 )")
        mounts.add_factory("/file", factory)

    loop = GLib.MainLoop()
    if server.attach(None) == 0:
        print(f"rtsp_server.py: cannot listen on port {port}", file=sys.stderr)
        return 2

    def first_client(*_):
        if options.stop_after > 0:
            GLib.timeout_add(int(options.stop_after * 1000), loop.quit)
            server.disconnect(handler)

    handler = server.connect("client-connected", first_client)
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGTERM, loop.quit)
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGINT, loop.quit)
    print(f"serving rtsp://127.0.0.1:{port}", flush=True)
    loop.run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
