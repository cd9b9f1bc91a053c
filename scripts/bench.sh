#!/usr/bin/env bash
# Compares hlscap with ffmpeg's own HLS muxer on the same work, in one run, alternating the
# two tools so that disk cache and machine load affect both alike.
# Usage: scripts/bench.sh            (inputs are generated once and cached under bench-out/)
# Environment: HLSCAP_BIN (default .build/release/hlscap), BENCH_RUNS (3), BENCH_SECONDS (600).
# Add a case by writing a case_* function and listing it in CASES.
set -euo pipefail
cd "$(dirname "$0")/.."

HLSCAP="${HLSCAP_BIN:-.build/release/hlscap}"
RUNS="${BENCH_RUNS:-3}"
SECONDS_OF_MEDIA="${BENCH_SECONDS:-600}"
OUT=bench-out
CASES=(${BENCH_CASES:-case_copy_1080p30 case_transcode_720p30})

mkdir -p "$OUT"

# A camera-like recording: 1080p30 H.264 at ~5 Mb/s with a keyframe every 2 s, stereo AAC.
input_1080p30() {
    local input="$OUT/input-1080p30-${SECONDS_OF_MEDIA}s.mp4"
    if [ ! -s "$input" ]; then
        echo "bench: generating $input (once)" >&2
        ffmpeg -hide_banner -v error -y \
            -f lavfi -i "testsrc2=size=1920x1080:rate=30" -f lavfi -i "sine=frequency=440:sample_rate=48000" \
            -t "$SECONDS_OF_MEDIA" -c:v libx264 -preset ultrafast -pix_fmt yuv420p \
            -g 60 -keyint_min 60 -sc_threshold 0 -b:v 5M -maxrate 6M -bufsize 10M \
            -c:a aac -b:a 128k -ac 2 "$input.partial.mp4"
        mv "$input.partial.mp4" "$input"
    fi
    echo "$input"
}

# A 60 s 720p30 recording to transcode: H.264 at a high rate (so decoding costs something) and AAC.
input_720p30() {
    local input="$OUT/input-720p30-60s.mp4"
    if [ ! -s "$input" ]; then
        echo "bench: generating $input (once)" >&2
        ffmpeg -hide_banner -v error -y \
            -f lavfi -i "testsrc2=size=1280x720:rate=30" -f lavfi -i "sine=frequency=440:sample_rate=44100" \
            -t 60 -c:v libx264 -preset ultrafast -pix_fmt yuv420p -g 60 -b:v 8M \
            -c:a aac -b:a 128k -ac 2 "$input.partial.mp4"
        mv "$input.partial.mp4" "$input"
    fi
    echo "$input"
}

# measure LABEL COMMAND...: runs COMMAND once, appends "wall_seconds peak_rss_kib" to LABEL's file.
measure() {
    local label="$1"
    shift
    /usr/bin/time -f '%e %M' -o "$OUT/time.last" "$@"
    cat "$OUT/time.last" >> "$OUT/results-$label.txt"
}

# median FILE COLUMN: median of one column of a results file.
median() {
    sort -n -k"$2" "$1" | awk -v column="$2" '{ values[NR] = $column }
        END { print (NR % 2) ? values[(NR + 1) / 2] : (values[NR / 2] + values[NR / 2 + 1]) / 2 }'
}

# compare NAME LABEL_A LABEL_B: prints medians of A and B and the ratios A/B.
compare() {
    local name="$1" a="$OUT/results-$2.txt" b="$OUT/results-$3.txt"
    local wall_a wall_b rss_a rss_b
    wall_a=$(median "$a" 1); wall_b=$(median "$b" 1)
    rss_a=$(median "$a" 2); rss_b=$(median "$b" 2)
    printf '%s (median of %s runs)\n' "$name" "$RUNS"
    printf '  %-8s wall %7.2f s   peak RSS %8d KiB\n' "$2" "$wall_a" "$rss_a"
    printf '  %-8s wall %7.2f s   peak RSS %8d KiB\n' "$3" "$wall_b" "$rss_b"
    awk -v wa="$wall_a" -v wb="$wall_b" -v ra="$rss_a" -v rb="$rss_b" -v a="$2" -v b="$3" \
        'BEGIN { printf "  %s/%s: wall time %.2fx, peak memory %.2fx\n", a, b, wa / wb, ra / rb }'
}

# Copy-mode packaging of a 1080p30 recording into 2 s fMP4 segments.
case_copy_1080p30() {
    local input
    input=$(input_1080p30)
    rm -f "$OUT/results-hlscap.txt" "$OUT/results-ffmpeg.txt"
    for run in $(seq "$RUNS"); do
        echo "bench: copy 1080p30 run $run/$RUNS" >&2
        measure hlscap "$HLSCAP" file "$input" --copy --out "$OUT/h" --overwrite
        rm -rf "$OUT/f" && mkdir -p "$OUT/f"
        measure ffmpeg ffmpeg -v error -y -i "$input" -c copy -f hls -hls_segment_type fmp4 -hls_time 2 \
            -hls_playlist_type vod "$OUT/f/playlist.m3u8"
    done
    compare "copy 1080p30 ${SECONDS_OF_MEDIA}s" hlscap ffmpeg
}

# Transcoding the same 720p30 minute with the same x264 preset, bit rate, VBV and keyframe grid.
case_transcode_720p30() {
    local input
    input=$(input_720p30)
    rm -f "$OUT/results-hlscap.txt" "$OUT/results-ffmpeg.txt"
    for run in $(seq "$RUNS"); do
        echo "bench: transcode 720p30 run $run/$RUNS" >&2
        measure hlscap "$HLSCAP" file "$input" --transcode --preset veryfast --video-bitrate 3M \
            --audio-bitrate 128k --out "$OUT/ht" --overwrite --quiet
        rm -rf "$OUT/ft" && mkdir -p "$OUT/ft"
        measure ffmpeg ffmpeg -v error -y -i "$input" -c:v libx264 -preset veryfast -profile:v high \
            -b:v 3M -maxrate 3M -bufsize 6M -g 60 -keyint_min 60 -sc_threshold 0 \
            -force_key_frames "expr:gte(t,n_forced*2)" -c:a aac -b:a 128k -ar 48000 -ac 2 \
            -f hls -hls_segment_type fmp4 -hls_time 2 -hls_playlist_type vod "$OUT/ft/playlist.m3u8"
    done
    compare "transcode 720p30 60s" hlscap ffmpeg
}

for case_function in "${CASES[@]}"; do
    "$case_function"
done
