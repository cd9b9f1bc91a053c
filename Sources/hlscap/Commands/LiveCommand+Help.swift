extension LiveCommand {
    static let help = """
        Usage: hlscap live --out DIR [options]

        Captures a V4L2 camera and an ALSA microphone (or the built-in test source), encodes H.264
        and AAC, and writes a live HLS stream: DIR/init.mp4, DIR/seg/000001.m4s …, a rolling
        DIR/playlist.m3u8 that lists only segments already stored, its I-frame playlist
        DIR/iframes.m3u8, and DIR/master.m3u8. Stop with Ctrl-C (or SIGTERM, or
        --duration): the last segment is written and the playlist gets EXT-X-ENDLIST. A second
        Ctrl-C exits at once, leaving a consistent playlist. SIGUSR1 starts a new segment at the
        next frame, with a keyframe in every rendition (an operator marking a scene change).

        Sources:
          --video DEV               /dev/videoN, "test" (moving pattern with a clock), "none", or a
                                    URL or file read through libavformat: rtsp:// rtsps:// srt://
                                    rtmp:// udp:// rtp:// http(s):// (MPEG-TS or HLS), clip.mp4
                                    (default: the first V4L2 capture device)
          --audio PCM               an ALSA capture PCM ("default", "hw:1,0", a name), "test" (a tone),
                                    "test:+5000ppm" (the tone from a sample clock that fast), a URL
                                    or file, or "none" (default: the sound of --video's URL or file,
                                    else "default")
          --size WxH                picture size (default 1280x720; a URL's or file's own size)
          --fps N                   frames per second (default 30; a URL's or file's own rate)
          --no-realtime             with the test source or a file: as fast as it encodes
          --loop                    start a file input again at its end; the stream goes on
          --rtsp-transport T        tcp (default) or udp
          --listen URL              take a pushed stream instead of --video: rtmp://ADDR:PORT/APP/KEY
                                    (one publisher at a time, with that stream key) or
                                    srt://ADDR:PORT[?passphrase=…]; the stream ends when the
                                    publisher leaves (with --reconnect, the next one continues it)
          --stall-timeout S         a URL that delivers nothing for S seconds ends the stream
                                    (default 10), and one that does not answer is refused
          --ca-file FILE            trust the authorities (or a server's own certificate) in this
                                    PEM file for https:// inputs instead of the system's store;
                                    an https server's certificate is always verified
          --input-format F          what to ask a V4L2 camera for: h264 (its own H.264, copied into
                                    the stream as it is), mjpeg (decoded) or raw (uncompressed
                                    pictures); hlscap devices lists what each camera offers.
                                    Default: the camera's H.264 when it offers it at --size and
                                    --fps and nothing asks for an encoding, else raw or MJPEG
          --transcode               decode and encode a URL's, file's or camera's H.264/HEVC and
                                    AAC; without it they are copied unless --size, --fps (not for a
                                    camera: they choose its mode), --ladder (not source,… for a
                                    URL or file), --record-size/-codec/-bitrate, --video-bitrate,
                                    --video-codec, --overlay, --loop or --reconnect ask for an
                                    encoding (--record alone records the copied source as it is)
          --reconnect               when the camera, microphone or URL fails, is unplugged or stalls,
                                    wait for it to come back instead of ending the stream: a dark
                                    picture (and silence) stands in meanwhile, and the stream goes
                                    on after EXT-X-DISCONTINUITY when it returns

        Encoding:
          --video-bitrate RATE      H.264 bit rate, e.g. 2500k or 3M (default: from size and rate)
          --audio-bitrate RATE      AAC bit rate (default 128k)
          --preset NAME             x264 or x265 preset (default veryfast)
          --video-codec CODEC       h264 (default) or hevc (libx265, hvc1)
          --encoder NAME            x264 (default; x265 for HEVC), vaapi (/dev/dri/renderD128),
                                    v4l2m2m (a Raspberry Pi's /dev/video11), nvenc (NVIDIA), or
                                    auto: the first of those that works here, else software
          --overlay FORMAT          write each frame's capture time into the picture, top left:
                                    "clock" (%Y-%m-%d %H:%M:%S) or a strftime format such as
                                    '%H:%M:%S'; in UTC, in DejaVu Sans Mono (fonts-dejavu-core);
                                    every rung and the recording carry it; a URL's or file's video
                                    is then encoded, not copied
          --overlay-local-time      --overlay in local time (TZ, else /etc/localtime), not UTC
          --overlay-font FILE       a TrueType or OpenType font for --overlay
          --record PATH             also record the capture, at full quality, into one fragmented
                                    MP4 file: playable at every moment, indexed (mfra) at a clean
                                    stop; with --resume a new file beside it (rec-2.mp4); a
                                    copied URL or file is recorded as it came, no second encoding
          --record-size WxH         the recording's picture size (default: the capture's, --size)
          --record-codec CODEC      hevc (default) or h264
          --record-bitrate RATE     the recording's rate (default: twice the stream's, 80 % for HEVC)
          --record-every PERIOD     a new recording file at each boundary of PERIOD on the clock
                                    (30s, 15m, 1h, 1d), named by strftime placeholders in
                                    --record's path: --record 'rec/%Y-%m-%d/%H-%M-%S.mp4'
          --record-local-time       boundaries and names in local time (default UTC)
          --keep DURATION           with --record-every: delete files older than this (7d)
          --keep-size SIZE          ... while the files take more than SIZE (50G), oldest first
          --min-free SIZE           ... while the disk has less than SIZE free (2G), oldest first
          --ladder RUNGS            several renditions from one capture: heights such as
                                    720p,480p,360p (Apple's rates), 1080p@5000k,720p@2500k, or
                                    with a codec per rung, 1080p:hevc@4000k,720p;
                                    DIR/master.m3u8, DIR/720p/…, DIR/audio/…; source as the
                                    top rung (source,480p,360p) copies a URL's or file's own
                                    video there and encodes the rungs below from it

        Stream:
          --out DIR                 directory for the stream (created if missing)
          --segment-duration S      segment length in seconds (default 2)
          --window N                segments in the playlist, at least 3 (default 6); 0 keeps all (EVENT)
          --dvr DURATION            keep DURATION of segments listed (2h, 30m) so viewers can rewind;
                                    with --serve, players reload it as delta updates (EXT-X-SKIP)
          --duration S              stop after S seconds
          --resume                  continue the stream already in DIR (after a stop or a crash)
          --overwrite               replace a stream already in DIR
          --quiet                   no status line
          --verbose                 a line per published segment
        \(PublishOptions.help)
        \(EncryptionOptions.help)

        Serving:
          --serve ADDR:PORT         also serve the stream from this process (see hlscap serve):
                                    playlists, segments, a preview page at /, /metrics
          --low-latency             with --serve: Low-Latency HLS, parts listed in the served
                                    playlist, blocking reloads, preload hints, delta updates;
                                    the files on disk stay a regular stream
          --part-duration S         the longest part (default 0.334: ten frames at 30 fps, and
                                    a hold-back of 1 s)
        \(ServerOptions.help)
          --help                    show this help

        Exit status: 0 stopped cleanly, 64 usage, 65 a key, token, certificate or OCSP file that
        cannot be used, 66 device or file missing or without the --input-format asked for,
        69 URL unreachable or --overlay's font unreadable, 73 DIR cannot be created or holds a
        stream, 74 write error, device or URL failure (without --reconnect), or a file that did
        not reach the origin, 130 second interrupt.
        """
}
