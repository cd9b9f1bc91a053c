#!/usr/bin/env bash
# Regenerates the committed fixture inputs. The committed files are the truth: tests read
# their bytes and never run this script. It records the exact command behind each file.
set -euo pipefail
cd "$(dirname "$0")"

# Same bytes from the same ffmpeg build: no encoder version strings, no metadata, one x264 thread.
BITEXACT=(-fflags +bitexact -flags:v +bitexact -flags:a +bitexact -map_metadata -1)
FF=(ffmpeg -hide_banner -loglevel error -y)
X264=(-c:v libx264 -threads 1 -preset veryfast -pix_fmt yuv420p)

# h264-aac.mp4: plain H.264 without B-frames, a keyframe every second, 48 kHz stereo AAC.
"${FF[@]}" -f lavfi -i "testsrc2=size=320x240:rate=25" -f lavfi -i "sine=frequency=440:sample_rate=48000" \
    -t 4 "${X264[@]}" -profile:v baseline -bf 0 -g 25 -keyint_min 25 -sc_threshold 0 -b:v 250k \
    -c:a aac -ac 2 -b:a 64k "${BITEXACT[@]}" h264-aac.mp4

# h264-bframes-aac.mp4: High profile with B-frames (composition offsets, ctts), 44.1 kHz mono AAC.
"${FF[@]}" -f lavfi -i "testsrc2=size=320x240:rate=30" -f lavfi -i "sine=frequency=440:sample_rate=44100" \
    -t 6 "${X264[@]}" -profile:v high -bf 2 -g 30 -keyint_min 30 -sc_threshold 0 -b:v 250k \
    -c:a aac -ac 1 -b:a 48k "${BITEXACT[@]}" h264-bframes-aac.mp4

# aac-priming-editlist.mp4: the mp4 muxer's default edit list hides the AAC encoder's 1024 priming
# samples (audio elst media_time 1024); the video has no B-frames, so only audio carries a shift.
"${FF[@]}" -f lavfi -i "testsrc2=size=320x240:rate=25" -f lavfi -i "sine=frequency=660:sample_rate=48000" \
    -t 5 "${X264[@]}" -profile:v main -bf 0 -g 25 -keyint_min 25 -sc_threshold 0 -b:v 200k \
    -c:a aac -ac 2 -b:a 64k -use_editlist 1 "${BITEXACT[@]}" aac-priming-editlist.mp4

# Same streams in other containers: Matroska, and MPEG-TS (Annex-B H.264, ADTS AAC).
"${FF[@]}" -i h264-aac.mp4 -c copy "${BITEXACT[@]}" h264-aac.mkv
"${FF[@]}" -i h264-aac.mp4 -c copy "${BITEXACT[@]}" h264-aac.ts

# Single-track inputs.
"${FF[@]}" -f lavfi -i "testsrc2=size=320x240:rate=25" \
    -t 3 "${X264[@]}" -profile:v main -bf 0 -g 25 -keyint_min 25 -sc_threshold 0 -b:v 250k \
    "${BITEXACT[@]}" video-only.mp4
"${FF[@]}" -f lavfi -i "sine=frequency=440:sample_rate=48000" \
    -t 3 -c:a aac -ac 2 -b:a 64k "${BITEXACT[@]}" audio-only.m4a

# long-gop.mp4: a keyframe every 5 s over 11 s, so copy mode can only cut 5 s segments.
"${FF[@]}" -f lavfi -i "testsrc2=size=160x120:rate=25" -f lavfi -i "sine=frequency=440:sample_rate=48000" \
    -t 11 "${X264[@]}" -profile:v main -bf 0 -g 125 -keyint_min 125 -sc_threshold 0 -b:v 80k \
    -c:a aac -ac 1 -b:a 32k "${BITEXACT[@]}" long-gop.mp4

# mpeg4-mp3.avi: neither stream can be copied into fMP4 HLS (MPEG-4 Part 2 video, MP3 audio).
"${FF[@]}" -f lavfi -i "testsrc2=size=160x120:rate=25" -f lavfi -i "sine=frequency=440:sample_rate=44100" \
    -t 2 -c:v mpeg4 -q:v 10 -c:a libmp3lame -b:a 64k "${BITEXACT[@]}" mpeg4-mp3.avi

# flash-beep.mp4: black video with one white frame at each whole second (frame n % 25 == 0) and
# a 50 ms 1 kHz beep starting at the same instants. aevalsrc is evaluated per sample, so the beep
# edges are sample-exact (a volume filter with eval=frame would round them to 1024-sample frames).
"${FF[@]}" -f lavfi -i "color=c=black:size=320x240:rate=25,drawbox=color=white:thickness=fill:enable='eq(mod(n\,25)\,0)'" \
    -f lavfi -i "aevalsrc='if(lt(mod(t\,1)\,0.05)\,0.5*sin(2*PI*1000*t)\,0)':sample_rate=48000:channel_layout=stereo" \
    -t 6 "${X264[@]}" -profile:v main -bf 0 -g 25 -keyint_min 25 -sc_threshold 0 -b:v 100k \
    -c:a aac -b:a 64k "${BITEXACT[@]}" flash-beep.mp4

# HEVC: one x265 thread and no x265 info SEI, so the bytes do not depend on the machine or carry a version.
X265=(-c:v libx265 -preset ultrafast -crf 36 -x265-params log-level=error:pools=1:frame-threads=1:info=0:keyint=25:min-keyint=25:scenecut=0)

# hevc-portrait.mov: a phone's portrait recording: 3 s of 160x90 HEVC (hvc1) stored landscape with a display
# matrix turning it a quarter clockwise, open GOPs (CRA keyframes after the first IDR); 48 kHz AAC.
"${FF[@]}" -f lavfi -i "testsrc2=size=160x90:rate=25" -f lavfi -i "sine=frequency=440:sample_rate=48000" \
    -t 3 "${X265[@]}" -pix_fmt yuv420p -tag:v hvc1 -c:a aac -ac 2 -b:a 64k "${BITEXACT[@]}" hevc-landscape.mov
"${FF[@]}" -i hevc-landscape.mov -c copy -metadata:s:v:0 rotate=90 "${BITEXACT[@]}" hevc-portrait.mov
rm hevc-landscape.mov

# hevc-hlg.ts: HEVC Main 10 with an HLG colour description (BT.2020, ARIB STD-B67) in MPEG-TS: Annex-B
# with in-band parameter sets, ADTS AAC.
"${FF[@]}" -f lavfi -i "testsrc2=size=160x90:rate=25" -f lavfi -i "sine=frequency=440:sample_rate=48000" \
    -t 3 "${X265[@]}" -pix_fmt yuv420p10le -color_primaries bt2020 -color_trc arib-std-b67 -colorspace bt2020nc \
    -c:a aac -ac 2 -b:a 64k "${BITEXACT[@]}" hevc-hlg.ts

# hevc-pq.mp4: video only, HEVC Main 10 with a full-range PQ colour description (BT.2020, SMPTE ST 2084),
# tagged hev1 (parameter sets also allowed in the samples).
"${FF[@]}" -f lavfi -i "testsrc2=size=160x90:rate=25" \
    -t 3 "${X265[@]}" -pix_fmt yuv420p10le -color_primaries bt2020 -color_trc smpte2084 -colorspace bt2020nc \
    -color_range pc -tag:v hev1 "${BITEXACT[@]}" hevc-pq.mp4

ls -l h264-aac.mp4 h264-bframes-aac.mp4 aac-priming-editlist.mp4 h264-aac.mkv h264-aac.ts \
    video-only.mp4 audio-only.m4a long-gop.mp4 mpeg4-mp3.avi flash-beep.mp4 hevc-portrait.mov hevc-hlg.ts hevc-pq.mp4
