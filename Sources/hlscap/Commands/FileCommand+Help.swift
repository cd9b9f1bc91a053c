extension FileCommand {
    static let help = """
        Usage: hlscap file INPUT… (--out DIR | --publish URL) [options]
               hlscap file RECORDINGS-DIR --from TIME (--to TIME | --duration SPAN) (--out DIR | -o FILE.mp4)

        Packages recordings (MP4, MOV, MKV, WebM, MPEG-TS … anything FFmpeg reads) as one HLS stream of
        fragmented MP4: DIR/init.mp4, DIR/seg/000001.m4s …, DIR/playlist.m3u8 (VOD, with ENDLIST) and
        DIR/master.m3u8. Several inputs are joined one after another.

        H.264/AAC inputs whose keyframes are at most 2 segment durations apart are copied without
        re-encoding; anything else is decoded and encoded (H.264 High through libx264, AAC-LC).
        Each segment starts with a keyframe.

        Mode:
          --copy                    copy the compressed samples; fail if an input cannot be copied
                                    (joined inputs follow EXT-X-DISCONTINUITY, with a new init
                                    section when their parameters differ)
          --transcode               always decode and encode (one continuous timeline)

        Encoding (each implies --transcode):
          --size WxH                picture size; "1280x" or "x720" keeps the aspect ratio
                                    (default: the first input's, made even; other inputs letterboxed)
          --fps RATE                convert to a constant frame rate: 30, 29.97, 30000/1001 (default:
                                    every frame keeps its own time, a variable rate included)
          --video-bitrate RATE      H.264 bit rate with a VBV cap at the same rate (default ~0.1 bit/pixel)
          --preset NAME             x264 preset (default veryfast)
          --audio-bitrate RATE      AAC bit rate (default 128k)
          --audio-rate HZ           AAC sample rate (default 48000)
          --audio-channels N        1 or 2 (default 2)
          --audio-track N           keep only this audio track, numbered from 1 in file order
                                    (repeatable; default: every audio track, each its own
                                    rendition in DIR/audio/<language or number>/ when there are several)
          --video-codec CODEC       h264 (default) or hevc (libx265, hvc1)
          --ladder RUNGS            several video renditions: heights such as 720p,480p,360p (Apple's
                                    rates), 1080p@5000k,720p@2500k, or 1080p:hevc@4000k,720p;
                                    DIR/master.m3u8, DIR/720p/…, DIR/audio/…

        A clip of recordings (a folder written by `hlscap live --record`):
          --from TIME               where the clip starts, e.g. 2026-12-01T10:02:00Z (RFC 3339); the
                                    copy starts at the keyframe at or before it, and the summary says
                                    how far that moved the start
          --to TIME                 where it ends (exclusive), or
          --duration SPAN           how long it is: 780, 90s, 13m, 2h
          -o FILE.mp4               one fragmented MP4 file instead of a stream in --out DIR
          The clip is copied, never encoded; gaps between recordings are closed.

        Output:
          --out DIR                 directory for the stream (created if missing)
          --segment-duration S      target segment length in seconds (default 2)
          --cut-at S,S…             also start a segment at these seconds of input time (the joined
                                    timeline); the inputs' chapters start segments too. Transcoding
                                    forces a keyframe there; copying cuts at the next keyframe
          --overwrite               replace a stream already in DIR
        \(PublishOptions.help)
        \(EncryptionOptions.help)
          --quiet                   no progress line
          --help                    show this help

        Exit status: 0 done, 64 usage, 65 bad input data, 66 input missing or unreadable,
        73 DIR cannot be created or holds a stream, 74 write error or a file did not reach the origin.
        """
}
