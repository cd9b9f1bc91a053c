#!/usr/bin/env bash
# make test-devices: captures from real kernel drivers inside the test VM (scripts/vm/run-in-vm.sh)
# and checks the results on the host. vivid stands in for a webcam at /dev/video0 and snd-aloop
# for a sound card: a tone played into one end of the loopback is recorded from the other.
# Usage: scripts/vm/test-devices.sh [STEP...]   (tools, hlscap, faults, formats; all by default;
#        results and logs go to .build/vm/test-devices/)
# Inside the VM the same script runs one guest_* step: test-devices.sh --guest STEP.
set -uo pipefail
cd "$(dirname "$0")/../.."

# vivid's webcam offers 320x180, 640x360, 640x480 and up, not 320x240; a request for another
# size is silently changed to the nearest one, so the checks use a size it really offers.
readonly VIDEO_SIZE=320x180
readonly VIDEO_FPS=15
readonly CAPTURE_SECONDS=3
# Fewer frames than this means the driver or the emulated machine dropped frames.
readonly MIN_VIDEO_FRAMES=$((VIDEO_FPS * CAPTURE_SECONDS * 9 / 10))
# CAPTURE_SECONDS less a little: the WAV ends a few samples short of the requested duration.
readonly MIN_AUDIO_SECONDS=2.9
readonly TONE_HZ=440
readonly SAMPLE_RATE=48000
readonly LOOPBACK_PLAYBACK=hw:Loopback,0,0
readonly LOOPBACK_CAPTURE=hw:Loopback,1,0
# The lavfi sine tone peaks at 1/8 of full scale (-18 dBFS); silence decodes below -90 dB.
readonly TONE_MIN_PEAK_DB=-30
# A dropout in the loopback shows as a run of samples this quiet, however short.
readonly GAP_MAX_DB=-60
readonly GAP_MIN_SECONDS=0.02
readonly PLAYER_START_LIMIT_SECONDS=30
# The faults step makes four live runs of about 20 s each, and waits for devices between them.
readonly VM_TIMEOUT_SECONDS=420
readonly HLSCAP=.build/debug/hlscap
readonly LIVE_SECONDS=8
# hlscap reads this many frames at least in LIVE_SECONDS; fewer means capture lost frames. Frames
# it read but dropped because the encoder fell behind (TCG on a busy host) still count as captured.
readonly MIN_LIVE_FRAMES=$((VIDEO_FPS * LIVE_SECONDS * 9 / 10))
# A second more than LIVE_SECONDS: frames read while hlscap starts and stops; more means duplicates.
readonly MAX_LIVE_FRAMES=$((VIDEO_FPS * (LIVE_SECONDS + 1)))
# The cheapest preset, as for ffmpeg above: the debug build under emulation is slow enough.
readonly LIVE_PRESET=ultrafast
# The AAC encoder's priming and the last partial frame shorten the audio a little.
readonly MIN_LIVE_AUDIO_SECONDS=$((LIVE_SECONDS - 1))
readonly RESULTS=.build/vm/test-devices
# Device faults: the device goes away once the playlist lists FAULT_AFTER_SEGMENTS segments and, with
# --reconnect, comes back OUTAGE_SECONDS later; the run is stopped (SIGINT) once the playlist lists
# FAULT_AFTER_SEGMENTS more after its return. A run still going FAULT_RUN_LIMIT_SECONDS after the
# device went is killed.
readonly FAULT_AFTER_SEGMENTS=2
readonly OUTAGE_SECONDS=4
readonly FAULT_RUN_LIMIT_SECONDS=75
# A stream that ends on a lost device lists EXT-X-ENDLIST within this long after the unplugging (the
# loss noticed, the next segment's write and the encoders' drain, under emulation), beyond what the
# writing queue was behind then: frames captured before the loss are still written. (With a sliding
# window hlscap exits later: it keeps the segments that left it for their retention time.)
readonly FAULT_END_LIMIT_SECONDS=15
# The live runs of the faults step: a tone needs no more, and FFmpeg's AAC encoder at 128k stereo takes
# most of a core under emulation (its serial writing queue then falls behind the capture).
readonly FAULT_AUDIO_BITRATE=32k
# What plays into the loopback during the faults step: a WAV made once in the VM, which costs its
# player almost nothing where generating the tone as it plays costs a tenth of a core.
readonly TONE_WAV=/tmp/tone.wav
readonly TONE_WAV_SECONDS=300
# While a device is away, its stand-in keeps segments coming: at least this many in OUTAGE_SECONDS.
readonly MIN_OUTAGE_SEGMENTS=1
# A capture captures a moment of silence before the player's data reaches it, at its start and on a
# new card: a stretch of silence shorter than this there is neither a dropout nor the stand-in's.
readonly PLAYER_RESTART_SILENCE_SECONDS=0.2
# The stand-in's silence ends at most this long after the restarted player runs (hlscap reopens the
# card and its first samples come through).
readonly TONE_BACK_SILENCE_SECONDS=2
# The longest pause between two video frames of a stream that came through an outage.
readonly MAX_FRAME_GAP_SECONDS=1
# The formats step: a v4l2loopback node (after vivid's /dev/video0) fed H.264 by ffmpeg stands in for a
# camera that offers H.264 (V4L2_PIX_FMT_H264); the feed is made on the host, 320x180 at 30 fps (the rate
# the loopback reports), a keyframe each second, its parameter sets in front of every keyframe as a UVC
# camera sends them. The loopback keeps FEED_BUFFERS frames, so a reader held up a moment loses none.
readonly LOOPBACK_DEVICE=/dev/video1
readonly FEED_SIZE=320x180
readonly FEED_FPS=30
readonly FEED_SECONDS=90
readonly FEED_BUFFERS=32
readonly FEED_READY_LIMIT_SECONDS=20
readonly COPY_SECONDS=8
# The copied stream holds at least this many of the fed pictures (a start at a keyframe, and the stop).
readonly MIN_COPIED_FRAMES=$((FEED_FPS * (COPY_SECONDS - 2)))
readonly VIVID=/sys/bus/platform/drivers/vivid
readonly ALOOP=/sys/bus/platform/drivers/snd_aloop

# ---- Inside the VM: $OUT is the shared output directory. ----

# Recording before the player runs would capture a stretch of silence first.
wait_until_playing() {
    local status="$1" waited=0
    until grep -q 'state: RUNNING' "$status" 2>/dev/null; do
        [ "$waited" -lt "$((PLAYER_START_LIMIT_SECONDS * 10))" ] || { echo "no playback on $status"; return 1; }
        sleep 0.1
        waited=$((waited + 1))
    done
}

guest_tools() {
    v4l2-ctl --list-devices > "$OUT/list-devices.txt" 2>&1
    v4l2-ctl --device /dev/video0 --list-formats-ext > "$OUT/formats.txt" 2>&1
    # YUYV is what most real webcams deliver uncompressed.
    ffmpeg -hide_banner -nostats -y -f v4l2 -input_format yuyv422 -video_size "$VIDEO_SIZE" \
        -framerate "$VIDEO_FPS" -i /dev/video0 -t "$CAPTURE_SECONDS" \
        -c:v libx264 -preset ultrafast "$OUT/video.mp4" > "$OUT/video.log" 2>&1

    # The player blocks on the loopback at real-time pace and runs until the recording is done.
    ffmpeg -hide_banner -nostats -v warning -f lavfi -i "sine=frequency=$TONE_HZ:sample_rate=$SAMPLE_RATE" \
        -ac 2 -f alsa "$LOOPBACK_PLAYBACK" > "$OUT/tone-player.log" 2>&1 &
    local player=$!
    wait_until_playing /proc/asound/Loopback/pcm0p/sub0/status
    ffmpeg -hide_banner -nostats -y -f alsa -sample_rate "$SAMPLE_RATE" -channels 2 \
        -i "$LOOPBACK_CAPTURE" -t "$CAPTURE_SECONDS" "$OUT/tone.wav" > "$OUT/tone.log" 2>&1
    # kill fails if the player died early; ffmpeg stopped by SIGTERM exits 255.
    kill "$player"
    wait "$player" || true
}

# The host's debug build runs in the VM; its exit status goes to $OUT/live.status so that a
# failing run still leaves its log and whatever stream it wrote for the host to show.
guest_hlscap() {
    "$HLSCAP" devices > "$OUT/devices.txt" 2>&1
    ffmpeg -hide_banner -nostats -v warning -f lavfi -i "sine=frequency=$TONE_HZ:sample_rate=$SAMPLE_RATE" \
        -ac 2 -f alsa "$LOOPBACK_PLAYBACK" > "$OUT/tone-player.log" 2>&1 &
    local player=$!
    wait_until_playing /proc/asound/Loopback/pcm0p/sub0/status
    local status=0
    "$HLSCAP" live --video /dev/video0 --audio "$LOOPBACK_CAPTURE" --size "$VIDEO_SIZE" --fps "$VIDEO_FPS" \
        --preset "$LIVE_PRESET" --duration "$LIVE_SECONDS" --out "$OUT/live" --verbose --quiet \
        > "$OUT/live.log" 2>&1 || status=$?
    echo "$status" > "$OUT/live.status"
    kill "$player"
    wait "$player" || true
}

# last_segment PLAYLIST: the number of the newest segment listed, 0 before the first. Not a count: a
# sliding window lists no more than its size.
last_segment() {
    local last
    last="$(grep '^seg/' "$1" 2>/dev/null | tail -n 1 | sed 's|^seg/0*\([0-9][0-9]*\)\.m4s$|\1|')"
    echo "${last:-0}"
}

uptime_seconds() { cut -d' ' -f1 /proc/uptime; }

# seconds_since UPTIME: the seconds since that uptime, to a tenth.
seconds_since() {
    echo "$1 $(uptime_seconds)" | awk '{ printf "%.1f\n", $2 - $1 }'
}

# wait_for_segments PLAYLIST NUMBER: until the playlist lists segment NUMBER (60 s at most).
wait_for_segments() {
    local waited=0
    until [ "$(last_segment "$1")" -ge "$2" ]; do
        [ "$waited" -lt 600 ] || { echo "$1 never listed segment $2"; return 1; }
        sleep 0.1
        waited=$((waited + 1))
    done
}

start_tone() {
    ffmpeg -hide_banner -nostats -v warning -i "$TONE_WAV" -f alsa "$LOOPBACK_PLAYBACK" >> "$OUT/tone-player.log" 2>&1 &
    player=$!
    wait_until_playing /proc/asound/Loopback/pcm0p/sub0/status
}

stop_tone() {
    kill "$player" 2>/dev/null
    wait "$player" 2>/dev/null || true
}

# fault NAME DRIVER DEVICE [--reconnect]: hlscap live from vivid and the loopback into $OUT/NAME while
# the tone plays; once it has listed a few segments the device (vivid.0 or snd_aloop.0) is unbound
# from its driver, as if unplugged. Without --reconnect the run must end by itself; with it the device
# is bound again OUTAGE_SECONDS later, and the run is stopped once a few more segments are listed. A run
# named *-away is stopped OUTAGE_SECONDS after the unplugging instead, the device still away.
# Every segment stays listed (--window 0), so the checks see the whole run.
# NAME.status holds the exit status, NAME.end-seconds the seconds from the unplugging to EXT-X-ENDLIST,
# NAME.segments-before the number of the last segment listed then, NAME.outage-segments how many were
# listed while the device was away, NAME.tone-back-seconds the seconds from the unplugging until a new
# player played into the sound card again.
fault() {
    local name="$1" driver="$2" device="$3"
    shift 3
    local playlist="$OUT/$name/playlist.m3u8"
    start_tone
    "$HLSCAP" live --video /dev/video0 --audio "$LOOPBACK_CAPTURE" --size "$VIDEO_SIZE" --fps "$VIDEO_FPS" \
        --preset "$LIVE_PRESET" --audio-bitrate "$FAULT_AUDIO_BITRATE" --window 0 --out "$OUT/$name" \
        --verbose --quiet "$@" > "$OUT/$name.log" 2>&1 &
    local hlscap=$!
    (sleep "$FAULT_RUN_LIMIT_SECONDS"; kill -9 "$hlscap") 2>/dev/null &
    local watchdog=$!
    wait_for_segments "$playlist" "$FAULT_AFTER_SEGMENTS"
    local before unplugged
    before="$(last_segment "$playlist")"
    echo "$before" > "$OUT/$name.segments-before"
    unplugged="$(uptime_seconds)"
    (
        until grep -q '^#EXT-X-ENDLIST' "$playlist" 2>/dev/null; do sleep 0.1; done
        seconds_since "$unplugged" > "$OUT/$name.end-seconds"
    ) &
    local ending=$!
    # Unbinding a sound card waits until every program has closed it: in the background.
    echo "$device" > "$driver/unbind" &
    local unbinding=$!
    if [ "${1:-}" = --reconnect ]; then
        sleep "$OUTAGE_SECONDS"
        echo $(($(last_segment "$playlist") - before)) > "$OUT/$name.outage-segments"
        if [[ "$name" != *-away ]]; then
            wait "$unbinding"
            echo "$device" > "$driver/bind"
            # A new card: what played into the old one failed with it, and starts again, as a user
            # would restart it.
            if [ "$driver" = "$ALOOP" ]; then
                stop_tone
                start_tone
                seconds_since "$unplugged" > "$OUT/$name.tone-back-seconds"
            fi
            wait_for_segments "$playlist" $(($(last_segment "$playlist") + FAULT_AFTER_SEGMENTS))
        fi
        kill -INT "$hlscap"
    fi
    local status=0
    wait "$hlscap" || status=$?
    echo "$status" > "$OUT/$name.status"
    kill "$watchdog" 2>/dev/null
    # The watcher sees EXT-X-ENDLIST within its next poll, if the run wrote it.
    grep -q '^#EXT-X-ENDLIST' "$playlist" 2>/dev/null || kill "$ending" 2>/dev/null
    wait "$ending" 2>/dev/null
    wait "$unbinding" 2>/dev/null
    stop_tone
    [ -e "$driver/$device" ] || echo "$device" > "$driver/bind"
    # The drivers make their nodes again before the next run opens them.
    sleep 1
}

guest_faults() {
    # Every run records its own status; one that fails must not skip the others.
    set +e
    ffmpeg -hide_banner -nostats -v error -f lavfi -i "sine=frequency=$TONE_HZ:sample_rate=$SAMPLE_RATE" \
        -t "$TONE_WAV_SECONDS" -ac 2 -y "$TONE_WAV"
    fault camera-lost "$VIVID" vivid.0
    fault camera-back "$VIVID" vivid.0 --reconnect
    fault microphone-lost "$ALOOP" snd_aloop.0
    fault microphone-back "$ALOOP" snd_aloop.0 --reconnect
    fault camera-away "$VIVID" vivid.0 --reconnect
    # Busy: another program holds the camera streaming, or the capture PCM open.
    v4l2-ctl --device /dev/video0 --stream-mmap --stream-count=100000 > /dev/null 2>&1 &
    local holder=$!
    sleep 2
    "$HLSCAP" live --video /dev/video0 --audio none --size "$VIDEO_SIZE" --fps "$VIDEO_FPS" --duration 5 \
        --out "$OUT/camera-busy" > "$OUT/camera-busy.log" 2>&1
    echo $? > "$OUT/camera-busy.status"
    kill "$holder"
    wait "$holder" || true
    arecord -q -D "$LOOPBACK_CAPTURE" -f S16_LE -r "$SAMPLE_RATE" -c 2 -d 60 /dev/null &
    holder=$!
    sleep 2
    "$HLSCAP" live --video none --audio "$LOOPBACK_CAPTURE" --duration 5 --out "$OUT/microphone-busy" \
        > "$OUT/microphone-busy.log" 2>&1
    echo $? > "$OUT/microphone-busy.status"
    kill "$holder"
    wait "$holder" || true
    # Unsupported: a node that is no camera.
    "$HLSCAP" live --video /dev/null --audio none --duration 5 --out "$OUT/not-a-camera" > "$OUT/not-a-camera.log" 2>&1
    echo $? > "$OUT/not-a-camera.status"
}

# --input-format on vivid (raw only), then on a v4l2loopback camera fed H.264.
guest_formats() {
    set +e
    "$HLSCAP" devices > "$OUT/devices-vivid.txt" 2>&1
    "$HLSCAP" live --video /dev/video0 --input-format raw --audio none --size "$VIDEO_SIZE" --fps "$VIDEO_FPS" \
        --preset "$LIVE_PRESET" --duration "$LIVE_SECONDS" --window 0 --out "$OUT/raw" --quiet > "$OUT/raw.log" 2>&1
    echo $? > "$OUT/raw.status"
    "$HLSCAP" live --video /dev/video0 --input-format h264 --audio none --size "$VIDEO_SIZE" --fps "$VIDEO_FPS" \
        --duration "$LIVE_SECONDS" --out "$OUT/no-h264" --quiet > "$OUT/no-h264.log" 2>&1
    echo $? > "$OUT/no-h264.status"

    modprobe v4l2loopback video_nr=1 card_label="H.264 loopback" max_buffers="$FEED_BUFFERS" exclusive_caps=0 \
        > "$OUT/loopback.log" 2>&1 || { echo "cannot load v4l2loopback" >> "$OUT/loopback.log"; return; }
    # The loopback offers the format its writer gives; the camera must be writing before it is read.
    ffmpeg -hide_banner -nostats -v warning -re -i "$OUT/feed.h264" -c:v copy -f v4l2 "$LOOPBACK_DEVICE" \
        > "$OUT/feeder.log" 2>&1 &
    local feeder=$! waited=0
    until v4l2-ctl --device "$LOOPBACK_DEVICE" --list-formats 2>/dev/null | grep -q "'H264'"; do
        [ "$waited" -lt "$((FEED_READY_LIMIT_SECONDS * 10))" ] || { echo "$LOOPBACK_DEVICE never offered H264" >> "$OUT/loopback.log"; break; }
        sleep 0.1
        waited=$((waited + 1))
    done
    "$HLSCAP" devices > "$OUT/devices-loopback.txt" 2>&1
    "$HLSCAP" live --video "$LOOPBACK_DEVICE" --input-format h264 --audio none --size "$FEED_SIZE" --fps "$FEED_FPS" \
        --duration "$COPY_SECONDS" --window 0 --out "$OUT/copied" --verbose --quiet > "$OUT/copied.log" 2>&1
    echo $? > "$OUT/copied.status"
    # Without --input-format: the camera offers H.264 at the size and rate asked for, so it is copied too.
    "$HLSCAP" live --video "$LOOPBACK_DEVICE" --audio none --size "$FEED_SIZE" --fps "$FEED_FPS" \
        --duration "$COPY_SECONDS" --window 0 --out "$OUT/fits" --quiet > "$OUT/fits.log" 2>&1
    echo $? > "$OUT/fits.status"
    # The camera's H.264 decoded and encoded again, as an encoding of the stream's own asks.
    "$HLSCAP" live --video "$LOOPBACK_DEVICE" --input-format h264 --transcode --audio none --size "$FEED_SIZE" \
        --fps "$FEED_FPS" --preset "$LIVE_PRESET" --duration "$COPY_SECONDS" --window 0 --out "$OUT/decoded" --quiet \
        > "$OUT/decoded.log" 2>&1
    echo $? > "$OUT/decoded.status"
    # ffmpeg stopped by SIGTERM exits 255.
    kill "$feeder"
    wait "$feeder" || true
}

if [ "${1:-}" = --guest ]; then
    set -e
    "guest_$2"
    exit
fi

# ---- On the host. ----

passed=0
failed=0

# check DESCRIPTION COMMAND...: the command passes by exiting 0; what it prints is shown below.
check() {
    local description="$1"
    shift
    local details
    if details="$("$@" 2>&1)"; then
        passed=$((passed + 1))
        echo "PASS $description"
    else
        failed=$((failed + 1))
        echo "FAIL $description"
    fi
    [ -z "$details" ] || sed 's/^/     /' <<< "$details"
}

# run_in_vm NAME COMMAND...: runs the command in the VM with $RESULTS/NAME as $OUT, keeps its
# output in $RESULTS/NAME.log and shows the log's tail if it fails.
run_in_vm() {
    local name="$1"
    shift
    local log="$RESULTS/$name.log"
    mkdir -p "$RESULTS/$name"
    if scripts/vm/run-in-vm.sh --out "$RESULTS/$name" --timeout "$VM_TIMEOUT_SECONDS" -- "$@" > "$log" 2>&1; then
        grep '^run-in-vm:' "$log"
        return 0
    fi
    echo "$log ends with:"
    tail -n 30 "$log"
    return 1
}

contains() {
    grep -q -- "$2" "$1" || { echo "$1 does not contain '$2'"; return 1; }
}

# expect_video FILE WIDTHxHEIGHT MIN_FRAMES MAX_FRAMES
expect_video() {
    local file="$1" size="$2" min_frames="$3" max_frames="$4"
    local stream
    stream="$(ffprobe -v error -count_frames -select_streams v:0 \
        -show_entries stream=codec_name,width,height,nb_read_frames -of csv=p=0 "$file")" || return 1
    local codec width height frames
    IFS=, read -r codec width height frames <<< "$stream"
    echo "$file: $codec ${width}x$height, $frames frames"
    [ "${width}x$height" = "$size" ] && [ "$frames" -ge "$min_frames" ] && [ "$frames" -le "$max_frames" ]
}

# Decoded in the stream's own time base: a camera's frames come at its pace, not exactly 1/fps apart,
# and two of them closer than that would share a time in ffmpeg's default 1/fps.
# ffmpeg reads a playlist without EXT-X-ENDLIST as live and waits for it to grow, for ever: a stream a
# failed check left unfinished must fail the decode too, not hang the run.
DECODE_TIMEOUT_SECONDS=120
expect_clean_decode() {
    local errors status=0
    errors="$(timeout "$DECODE_TIMEOUT_SECONDS" ffmpeg -v error -i "$1" -enc_time_base -1 -f null - 2>&1)" || status=$?
    [ "$status" -ne 124 ] || { echo "ffmpeg was still decoding $1 after $DECODE_TIMEOUT_SECONDS s (no EXT-X-ENDLIST?)"; return 1; }
    [ -z "$errors" ] || { echo "$errors"; return 1; }
}

# A live source changes from frame to frame (vivid stamps a time and frame counter on each).
expect_moving_picture() {
    local frames distinct
    frames="$(timeout "$DECODE_TIMEOUT_SECONDS" ffmpeg -v error -i "$1" -map 0:v:0 -f framemd5 - | grep -v '^#' | awk -F, '{ print $6 }')"
    distinct="$(sort -u <<< "$frames" | wc -l)"
    echo "$1: $distinct distinct of $(wc -l <<< "$frames") frames"
    [ "$distinct" -gt $(($(wc -l <<< "$frames") / 2)) ]
}

# expect_audio FILE SAMPLE_RATE CHANNELS MIN_SECONDS (a stream may start later than 0: hlscap's at 10 s)
expect_audio() {
    local stream rate channels start end duration
    stream="$(ffprobe -v error -select_streams a:0 -show_entries stream=sample_rate,channels,start_time,duration \
        -of csv=p=0 "$1")" || return 1
    IFS=, read -r rate channels start end <<< "$stream"
    duration="$(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.3f", e - s }')"
    echo "$1: $rate Hz, $channels channels, $duration s"
    [ "$rate" = "$2" ] && [ "$channels" = "$3" ] && awk -v d="$duration" -v min="$4" 'BEGIN { exit !(d >= min) }'
}

# The tone is there at its level and never drops out: no gap of silence, anywhere.
expect_continuous_tone() {
    local report peak gaps
    report="$(ffmpeg -hide_banner -nostats -i "$1" -af volumedetect,silencedetect=noise=${GAP_MAX_DB}dB:duration=$GAP_MIN_SECONDS \
        -f null - 2>&1)" || return 1
    peak="$(sed -n 's/.*max_volume: \(-\?[0-9.]*\) dB.*/\1/p' <<< "$report")"
    gaps="$(grep -c 'silence_start' <<< "$report")"
    echo "$1: peak ${peak:-?} dB, $gaps silent gaps"
    [ -n "$peak" ] && [ "$gaps" -eq 0 ] && awk -v p="$peak" -v min="$TONE_MIN_PEAK_DB" 'BEGIN { exit !(p >= min) }'
}

# Standard tools against the drivers: proves the VM, the drivers and the checks themselves.
check_tools() {
    local out="$RESULTS/tools"
    check "the VM boots, loads vivid and snd-aloop, and runs the capture tools" \
        run_in_vm tools scripts/vm/test-devices.sh --guest tools
    check "v4l2-ctl lists vivid at /dev/video0" contains "$out/list-devices.txt" /dev/video0
    check "/dev/video0 offers YUYV" contains "$out/formats.txt" "'YUYV'"
    check "/dev/video0 offers $VIDEO_SIZE" contains "$out/formats.txt" "Size: Discrete $VIDEO_SIZE"
    check "ffmpeg captured $CAPTURE_SECONDS s of $VIDEO_SIZE H.264 at $VIDEO_FPS fps from /dev/video0" \
        expect_video "$out/video.mp4" "$VIDEO_SIZE" "$MIN_VIDEO_FRAMES" "$((VIDEO_FPS * CAPTURE_SECONDS + 1))"
    check "the captured video decodes without errors" expect_clean_decode "$out/video.mp4"
    check "the captured video moves" expect_moving_picture "$out/video.mp4"
    check "ffmpeg recorded $CAPTURE_SECONDS s of ${SAMPLE_RATE} Hz stereo from $LOOPBACK_CAPTURE" \
        expect_audio "$out/tone.wav" "$SAMPLE_RATE" 2 "$MIN_AUDIO_SECONDS"
    check "the recording carries the tone played into $LOOPBACK_PLAYBACK without gaps" \
        expect_continuous_tone "$out/tone.wav"
}

# expect_status FILE: the exit status recorded in FILE is 0; shows the log beside it otherwise.
expect_status() {
    local status
    status="$(cat "$1" 2>/dev/null)" || { echo "$1 is missing"; return 1; }
    [ "$status" = 0 ] && return 0
    echo "exit status $status; ${1%.status}.log:"
    cat "${1%.status}.log"
    return 1
}

# concatenate DIR FILE: the init section and every segment DIR/playlist.m3u8 lists, as one fMP4
# that ffprobe reports durations for (the HLS demuxer does not).
concatenate() {
    local playlist="$1/playlist.m3u8"
    [ -f "$playlist" ] || { echo "$playlist is missing"; return 1; }
    local uri
    cat "$1/init.mp4" > "$2"
    grep -v '^#' "$playlist" | while read -r uri; do cat "$1/$uri"; done >> "$2"
}

# expect_live_frames FILE LOG SIZE MIN_CAPTURED MAX_CAPTURED: FILE holds every frame hlscap's summary
# line in LOG says it encoded, at SIZE, and the frames it encoded plus those it dropped are in range.
expect_live_frames() {
    local file="$1" log="$2" size="$3" min="$4" max="$5"
    local summary encoded dropped
    summary="$(grep -o '[0-9]* frames, [0-9]* dropped' "$log")" || { echo "no summary line in $log"; return 1; }
    read -r encoded _ dropped _ <<< "$summary"
    echo "hlscap captured $((encoded + dropped)) frames: encoded $encoded, dropped $dropped"
    expect_video "$file" "$size" "$encoded" "$encoded" \
        && [ "$((encoded + dropped))" -ge "$min" ] && [ "$((encoded + dropped))" -le "$max" ]
}

# The tone is in the stream at its level.
expect_audible() {
    local peak
    peak="$(ffmpeg -hide_banner -nostats -i "$1" -map 0:a:0 -af volumedetect -f null - 2>&1 \
        | sed -n 's/.*max_volume: \(-\?[0-9.]*\) dB.*/\1/p')"
    echo "$1: audio peak ${peak:-?} dB"
    [ -n "$peak" ] && awk -v p="$peak" -v min="$TONE_MIN_PEAK_DB" 'BEGIN { exit !(p >= min) }'
}

# hlscap against the same drivers: `hlscap devices`, then a live stream from vivid and the loopback.
check_hlscap() {
    local out="$RESULTS/hlscap"
    local stream="$out/live" joined="$out/live.mp4"
    check "the VM runs hlscap devices and hlscap live" run_in_vm hlscap scripts/vm/test-devices.sh --guest hlscap
    check "hlscap devices lists vivid at /dev/video0" contains "$out/devices.txt" /dev/video0
    check "hlscap devices lists the Loopback card" contains "$out/devices.txt" Loopback
    check "hlscap live from /dev/video0 and $LOOPBACK_CAPTURE exits 0" expect_status "$out/live.status"
    check "the live playlist ends with EXT-X-ENDLIST" contains "$stream/playlist.m3u8" '#EXT-X-ENDLIST'
    check "ffmpeg decodes the live playlist without errors" expect_clean_decode "$stream/playlist.m3u8"
    check "hlscap validate finds no error in the stream" "$HLSCAP" validate "$stream"
    check "the listed segments join into one fMP4" concatenate "$stream" "$joined"
    check "hlscap captured $LIVE_SECONDS s of $VIDEO_SIZE video at $VIDEO_FPS fps; the stream holds every frame it encoded" \
        expect_live_frames "$joined" "$out/live.log" "$VIDEO_SIZE" "$MIN_LIVE_FRAMES" "$MAX_LIVE_FRAMES"
    check "the stream's video moves" expect_moving_picture "$joined"
    check "the stream holds $LIVE_SECONDS s of $SAMPLE_RATE Hz stereo audio" \
        expect_audio "$joined" "$SAMPLE_RATE" 2 "$MIN_LIVE_AUDIO_SECONDS"
    check "the stream's audio carries the tone" expect_audible "$joined"
    [ ! -f "$out/live.log" ] || sed 's/^/     /' "$out/live.log"
}

# expect_exit NAME STATUS: the run ended with that status; shows its log otherwise.
expect_exit() {
    local status
    status="$(cat "$1.status" 2>/dev/null)" || { echo "$1.status is missing"; return 1; }
    echo "exit status $status"
    [ "$status" = "$2" ] || { cat "$1.log"; return 1; }
}

# expect_prompt_end RUN: the playlist ended within FAULT_END_LIMIT_SECONDS of the unplugging, beyond
# how late the writing queue listed the last segment before it (hlscap's "listed N ms after its last
# frame").
expect_prompt_end() {
    local seconds segment behind
    seconds="$(cat "$1.end-seconds")" || { echo "the playlist never ended"; return 1; }
    segment="$(printf 'seg/%06d.m4s' "$(cat "$1.segments-before")")"
    behind="$(sed -n "s|.*published $segment .*listed \([0-9]*\) ms after its last frame.*|\1|p" "$1.log")"
    [ -n "$behind" ] || { echo "$1.log does not say when $segment was listed"; return 1; }
    echo "EXT-X-ENDLIST came $seconds s after the device was unplugged; $segment was listed $behind ms after its last frame"
    awk -v s="$seconds" -v behind="$behind" -v limit="$FAULT_END_LIMIT_SECONDS" 'BEGIN { exit !(s <= limit + behind / 1000) }'
}

# expect_one_line LOG TEXT...: LOG has an error line naming every TEXT.
expect_error_naming() {
    local log="$1"
    shift
    local line
    line="$(grep '^hlscap: ' "$log" | grep -v 'warning' | tail -n 1)"
    echo "${line:-no error line in $log}"
    for text in "$@"; do grep -q -- "$text" <<< "$line" || return 1; done
}

# expect_discontinuities PLAYLIST N: the playlist holds N EXT-X-DISCONTINUITY tags.
expect_discontinuities() {
    local count
    count="$(grep -c '^#EXT-X-DISCONTINUITY$' "$1")"
    echo "$1: $count discontinuities"
    [ "$count" = "$2" ]
}

# expect_no_frame_gap FILE: no pause between video frames over MAX_FRAME_GAP_SECONDS (a stand-in
# picture filled the outage).
expect_no_frame_gap() {
    local gap
    gap="$(ffprobe -v error -select_streams v:0 -show_entries packet=pts_time -of csv=p=0 "$1" | sort -g \
        | awk 'NR > 1 && $1 - last > gap { gap = $1 - last } { last = $1 } END { printf "%.3f", gap }')"
    echo "$1: longest pause between frames $gap s"
    awk -v g="$gap" -v max="$MAX_FRAME_GAP_SECONDS" 'BEGIN { exit !(g <= max) }'
}

expect_outage_segments() {
    local count
    count="$(cat "$1.outage-segments")" || return 1
    echo "$count segments listed while the device was away"
    [ "$count" -ge "$MIN_OUTAGE_SEGMENTS" ]
}

# expect_silent_stretches FILE COUNT MIN MAX [SHORTEST]: COUNT stretches of silence of SHORTEST s or more
# (default GAP_MIN_SECONDS) in the audio, each MIN to MAX s.
expect_silent_stretches() {
    local report start durations
    report="$(ffmpeg -hide_banner -nostats -i "$1" -map 0:a:0 -af silencedetect=noise=${GAP_MAX_DB}dB:duration=${5:-$GAP_MIN_SECONDS} \
        -f null - 2>&1)" || return 1
    start="$(sed -n 's/.*silence_start: \([0-9.]*\).*/\1/p' <<< "$report" | head -n 1)"
    durations="$(sed -n 's/.*silence_duration: \([0-9.]*\).*/\1/p' <<< "$report" | tr '\n' ' ')"
    echo "$1: silent stretches of [ $durations] s"
    # A capture opened while the player runs starts with a moment of silence: not a dropout.
    if [ "$start" = 0 ] && awk -v d="${durations%% *}" -v max="$PLAYER_RESTART_SILENCE_SECONDS" 'BEGIN { exit !(d < max) }'; then
        echo "the first, at the start, is the new capture's"
        durations="${durations#* }"
    fi
    [ "$(wc -w <<< "$durations")" = "$2" ] || return 1
    for duration in $durations; do
        awk -v d="$duration" -v min="$3" -v max="$4" 'BEGIN { exit !(d >= min && d <= max) }' || return 1
    done
}

# expect_stand_in_silence RUN: one stretch of silence in the joined stream, from about the unplugging
# until the restarted player played into the card again.
expect_stand_in_silence() {
    local tone_back
    tone_back="$(cat "$1.tone-back-seconds")" || return 1
    echo "the tone played into the card again $tone_back s after it was unplugged"
    expect_silent_stretches "$1.mp4" 1 $((OUTAGE_SECONDS - 1)) \
        "$(awk -v t="$tone_back" -v s="$TONE_BACK_SILENCE_SECONDS" 'BEGIN { print t + s }')" \
        "$PLAYER_RESTART_SILENCE_SECONDS"
}

# check_finished_stream NAME DIR: what every fault run's stream must be at its end: a playlist with
# EXT-X-ENDLIST, no error from hlscap validate, a clean decode.
check_finished_stream() {
    local name="$1" stream="$2"
    check "$name: the playlist ends with EXT-X-ENDLIST" contains "$stream/playlist.m3u8" '#EXT-X-ENDLIST'
    check "$name: hlscap validate finds no error" "$HLSCAP" validate "$stream"
    check "$name: ffmpeg decodes the stream without errors" expect_clean_decode "$stream/playlist.m3u8"
}

# Unplugging the camera or the sound card mid-stream, with and without --reconnect; busy and
# unsupported devices.
check_faults() {
    local out="$RESULTS/faults"
    check "the VM unplugs and plugs back vivid and snd-aloop under hlscap live" \
        run_in_vm faults scripts/vm/test-devices.sh --guest faults
    local name
    for name in camera-lost microphone-lost; do
        local device=/dev/video0
        [ "$name" = camera-lost ] || device="$LOOPBACK_CAPTURE"
        check "$name: without --reconnect, hlscap exits 74" expect_exit "$out/$name" 74
        check "$name: the error names $device" expect_error_naming "$out/$name.log" "$device"
        check "$name: the playlist ends within $FAULT_END_LIMIT_SECONDS s (beyond the writing queue's delay)" \
            expect_prompt_end "$out/$name"
        check_finished_stream "$name" "$out/$name"
    done
    for name in camera-back microphone-back; do
        local stream="$out/$name" joined="$out/$name.mp4"
        check "$name: with --reconnect, hlscap runs until it is stopped and exits 0" expect_exit "$out/$name" 0
        check "$name: it says it waits for the device, and that it is back" \
            grep -E 'waiting for it to come back|is back after' "$out/$name.log"
        check "$name: the stream goes on after exactly one EXT-X-DISCONTINUITY" \
            expect_discontinuities "$stream/playlist.m3u8" 1
        check_finished_stream "$name" "$stream"
        check "$name: the listed segments join into one fMP4" concatenate "$stream" "$joined"
        check "$name: segments went on while the device was away" expect_outage_segments "$out/$name"
        check "$name: the picture never pauses over $MAX_FRAME_GAP_SECONDS s" expect_no_frame_gap "$joined"
    done
    check "camera-back: the tone never drops out while the camera is away" \
        expect_silent_stretches "$out/camera-back.mp4" 0 0 0
    check "microphone-back: silence stands in for the sound card while it is away, once" \
        expect_stand_in_silence "$out/microphone-back"
    check "camera-away: with --reconnect and the camera still away, a stop ends the stream and exits 0" \
        expect_exit "$out/camera-away" 0
    check "camera-away: the summary says the camera was still away at the stop" \
        grep -E '/dev/video0 still away at the stop \(lost [0-9.]+ s before it\)' "$out/camera-away.log"
    check "camera-away: segments went on while the camera was away" expect_outage_segments "$out/camera-away"
    check_finished_stream camera-away "$out/camera-away"
    check "camera-busy: a camera another program streams from is refused" expect_exit "$out/camera-busy" 66
    check "camera-busy: the error names /dev/video0 and says it is busy" \
        expect_error_naming "$out/camera-busy.log" /dev/video0 busy
    check "microphone-busy: a capture PCM another program holds is refused" expect_exit "$out/microphone-busy" 66
    check "microphone-busy: the error names $LOOPBACK_CAPTURE and says it is busy" \
        expect_error_naming "$out/microphone-busy.log" "$LOOPBACK_CAPTURE" busy
    check "not-a-camera: /dev/null as --video is refused" expect_exit "$out/not-a-camera" 66
    check "not-a-camera: the error names /dev/null" expect_error_naming "$out/not-a-camera.log" /dev/null
    for name in camera-busy microphone-busy not-a-camera; do
        check "$name: no stream is left behind" test ! -e "$out/$name/playlist.m3u8"
    done
    local log
    for log in "$out"/*.log; do
        echo "     == $log"
        sed 's/^/     /' "$log"
    done
}

# expect_copied_packets STREAM FEED MIN: the stream's pictures are the fed ones, byte for byte and in the
# fed order, at least MIN of them. Compared as framemd5 of the slice NAL units of each access unit: the
# stream carries them length-prefixed with the parameter sets in its init section, the feed with start
# codes and the parameter sets in front of each keyframe. Pictures may be missing where the loopback
# lost them: it keeps 32 buffers, about a second, and a reader held up longer under emulation (seen
# once in a CI run: 43 frames, with a 1.46 s gap in the driver's own stamps) finds them overwritten;
# the count lost is printed.
expect_copied_packets() {
    local stream="$1" feed="$2" min="$3"
    local joined="$stream.mp4" elementary="$stream.h264"
    concatenate "$stream" "$joined" || return 1
    ffmpeg -v error -y -i "$joined" -map 0:v:0 -c copy -f h264 "$elementary" || return 1
    local copied fed
    copied="$(slice_hashes "$elementary")" || return 1
    fed="$(slice_hashes "$feed")" || return 1
    local count
    count="$(wc -l <<< "$copied")"
    echo "$stream: $count pictures copied; the feed has $(wc -l <<< "$fed")"
    [ "$count" -ge "$min" ] || return 1
    # Each copied picture must be found in the feed after the one before it.
    local lost
    lost="$(awk 'NR == FNR { copied[++n] = $0; next }
                 matched < n && $0 == copied[matched + 1] { matched++; if (matched > 1) lost += skipped; skipped = 0; next }
                 matched > 0 && matched < n { skipped++ }
                 END { if (matched < n) exit 1; print lost + 0 }' <(echo "$copied") <(echo "$fed"))" \
        || { echo "the copied pictures are not the fed ones in the fed order"; return 1; }
    echo "$stream: $lost fed pictures lost between the first copied and the last"
}

slice_hashes() {
    timeout "$DECODE_TIMEOUT_SECONDS" ffmpeg -v error -i "$1" -map 0:v:0 -c copy -bsf:v 'filter_units=pass_types=1|5' -f framemd5 - \
        | grep -v '^#' | awk -F, '{ gsub(/ /, "", $6); print $6 }'
}

# expect_copied_keyframes STREAM: every segment starts with a keyframe of the camera's (copy cuts only
# there), the first at or after each 2 s boundary: with a keyframe each second, segments but the last
# last from 1 to 3 s (the driver stamps each frame as the feeder writes it, a little early or late).
expect_copied_keyframes() {
    local playlist="$1/playlist.m3u8" uri durations
    durations="$(sed -n 's/^#EXTINF:\([0-9.]*\),.*/\1/p' "$playlist" | tr '\n' ' ')"
    echo "$playlist: segments of $durations s"
    for uri in $(grep '^seg/' "$playlist"); do
        local first
        first="$(cat "$1/init.mp4" "$1/$uri" | ffprobe -v error -select_streams v:0 -show_entries packet=flags \
            -read_intervals '%+#1' -of csv=p=0 - | head -n 1)"
        [[ "$first" == K* ]] || { echo "$uri starts without a keyframe ($first)"; return 1; }
    done
    awk -v list="$durations" 'BEGIN { n = split(list, d, " "); for (i = 1; i < n; i++) if (d[i] < 0.9 || d[i] > 3.1) exit 1 }'
}

# expect_listed LISTING LINE SIZE_PATTERN: LISTING has the format LINE, and a size line matching
# SIZE_PATTERN (an extended regular expression) follows it before the next format.
expect_listed() {
    local sizes
    sizes="$(awk -v line="$2" 'index($0, line) { inside = 1; print; next } /^    [^ ]/ { inside = 0 } inside' "$1")"
    [ -n "$sizes" ] || { echo "$1 does not list '$2'"; return 1; }
    grep -E -- "$3" <<< "$sizes" | head -n 1 | grep . || { echo "no size line matches '$3' under '$2'"; return 1; }
}

# --input-format and hlscap devices against vivid and against a v4l2loopback camera fed H.264.
check_formats() {
    local out="$RESULTS/formats"
    mkdir -p "$out"
    ffmpeg -hide_banner -v error -y -f lavfi -i "testsrc2=size=$FEED_SIZE:rate=$FEED_FPS" -t "$FEED_SECONDS" \
        -c:v libx264 -preset ultrafast -g "$FEED_FPS" -bf 0 -x264-params repeat-headers=1 -f h264 "$out/feed.h264"
    check "the VM runs hlscap with --input-format on vivid and on a v4l2loopback H.264 camera" \
        run_in_vm formats scripts/vm/test-devices.sh --guest formats
    check "hlscap devices marks vivid's YUYV raw, with $VIDEO_SIZE at $VIDEO_FPS fps among its sizes and rates" \
        expect_listed "$out/devices-vivid.txt" "YUYV (YUYV 4:2:2): raw (--input-format raw)" \
        "^ +$VIDEO_SIZE +([0-9.]+, )*$VIDEO_FPS(, [0-9.]+)* fps$"
    check "raw: --input-format raw on vivid exits 0" expect_exit "$out/raw" 0
    check_finished_stream raw "$out/raw"
    check "raw: the stream's video is encoded, not copied" bash -c "! grep -q 'video copied' '$out/raw.log'"
    check "no-h264: --input-format h264 on vivid, which offers none, exits 66" expect_exit "$out/no-h264" 66
    check "no-h264: one line names /dev/video0, says it offers no H.264 and what to give" \
        expect_error_naming "$out/no-h264.log" /dev/video0 "offers no H.264" YUYV "--input-format raw"
    check "no-h264: one line only" test "$(wc -l < "$out/no-h264.log")" = 1
    check "no-h264: no stream is left behind" test ! -e "$out/no-h264/playlist.m3u8"
    check "v4l2loopback loads and offers the fed H.264" bash -c "! grep -q . '$out/loopback.log'"
    check "hlscap devices marks the loopback's H264 as copied, at $FEED_SIZE and $FEED_FPS fps" \
        expect_listed "$out/devices-loopback.txt" "H264 (H.264): H.264, copied into the stream (--input-format h264)" \
        "^ +$FEED_SIZE +$FEED_FPS fps$"
    local name
    for name in copied fits; do
        check "$name: hlscap live from the loopback camera exits 0" expect_exit "$out/$name" 0
        check "$name: the summary says the video was copied" contains "$out/$name.log" 'video copied'
        check_finished_stream "$name" "$out/$name"
        check "$name: the stream's pictures are the fed ones, unchanged" \
            expect_copied_packets "$out/$name" "$out/feed.h264" "$MIN_COPIED_FRAMES"
        check "$name: segments start at the camera's keyframes" expect_copied_keyframes "$out/$name"
    done
    check "decoded: --input-format h264 --transcode from the loopback camera exits 0" expect_exit "$out/decoded" 0
    check "decoded: the stream's video is encoded, not copied" bash -c "! grep -q 'video copied' '$out/decoded.log'"
    check_finished_stream decoded "$out/decoded"
    check "decoded: the listed segments join into one fMP4" concatenate "$out/decoded" "$out/decoded.mp4"
    check "decoded: the stream holds the camera's pictures at $FEED_SIZE" \
        expect_video "$out/decoded.mp4" "$FEED_SIZE" "$MIN_COPIED_FRAMES" "$((FEED_FPS * (COPY_SECONDS + 1)))"
    for name in raw no-h264 copied fits decoded feeder loopback; do
        echo "     == $out/$name.log"
        sed 's/^/     /' "$out/$name.log"
    done
}

rm -rf "$RESULTS"
mkdir -p "$RESULTS"
for step in "${@:-tools hlscap faults formats}"; do
    for name in $step; do "check_$name"; done
done
echo "devices: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
