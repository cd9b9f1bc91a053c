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
CASES=(${BENCH_CASES:-case_copy_1080p30 case_validate_1080p30 case_transcode_720p30 case_live_720p30 case_live_ladder_720p30
    case_file_ladder_1080p30 case_ladder_file case_publish_720p30 case_live_record_720p30 case_serve_requests
    case_serve_segment_rps case_serve_waiting_parts case_encrypt case_dvr case_rtsp_copy case_rtsp_ladder case_rtsp_copy_many case_run_cameras case_rtsp_latency
    case_overlay case_live_hour})
# Encryption methods case_encrypt compares with the clear runs.
ENCRYPT_METHODS=(${BENCH_ENCRYPT_METHODS:-aes-128 cbcs})

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

# measure LABEL COMMAND...: runs COMMAND once, appends "wall_seconds peak_rss_kib user_seconds
# system_seconds" to LABEL's file.
measure() {
    local label="$1"
    shift
    /usr/bin/time -f '%e %M %U %S' -o "$OUT/time.last" "$@"
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
    local wall_a wall_b rss_a rss_b cpu_a cpu_b
    wall_a=$(median "$a" 1); wall_b=$(median "$b" 1)
    rss_a=$(median "$a" 2); rss_b=$(median "$b" 2)
    awk '{ print $1, $2, $3 + $4 }' "$a" > "$a.cpu"; awk '{ print $1, $2, $3 + $4 }' "$b" > "$b.cpu"
    cpu_a=$(median "$a.cpu" 3); cpu_b=$(median "$b.cpu" 3)
    printf '%s (median of %s runs)\n' "$name" "$RUNS"
    printf '  %-8s wall %7.2f s   cpu %7.2f s   peak RSS %8d KiB\n' "$2" "$wall_a" "$cpu_a" "$rss_a"
    printf '  %-8s wall %7.2f s   cpu %7.2f s   peak RSS %8d KiB\n' "$3" "$wall_b" "$cpu_b" "$rss_b"
    awk -v wa="$wall_a" -v wb="$wall_b" -v ca="$cpu_a" -v cb="$cpu_b" -v ra="$rss_a" -v rb="$rss_b" -v a="$2" -v b="$3" \
        'BEGIN { printf "  %s/%s: wall time %.2fx, cpu time %.2fx, peak memory %.2fx\n", a, b, wa / wb, ca / cb, ra / rb }'
}

# Copy-mode packaging of a 1080p30 recording into 2 s fMP4 segments. hlscap makes its output
# durable before it writes the playlist; ffmpeg leaves it in the page cache, so it is measured as it
# is and again followed by `sync -f`, which is what the same guarantee costs it.
case_copy_1080p30() {
    local input
    input=$(input_1080p30)
    rm -f "$OUT/results-hlscap.txt" "$OUT/results-ffmpeg.txt" "$OUT/results-ffmpeg+sync.txt"
    for run in $(seq "$RUNS"); do
        echo "bench: copy 1080p30 run $run/$RUNS" >&2
        measure hlscap "$HLSCAP" file "$input" --copy --out "$OUT/h" --overwrite --quiet
        rm -rf "$OUT/f" && mkdir -p "$OUT/f"
        measure ffmpeg ffmpeg -v error -y -i "$input" -c copy -f hls -hls_segment_type fmp4 -hls_time 2 \
            -hls_playlist_type vod "$OUT/f/playlist.m3u8"
        rm -rf "$OUT/f" && mkdir -p "$OUT/f"
        measure ffmpeg+sync sh -c "ffmpeg -v error -y -i '$input' -c copy -f hls -hls_segment_type fmp4 \
            -hls_time 2 -hls_playlist_type vod '$OUT/f/playlist.m3u8' && sync -f '$OUT/f/playlist.m3u8'"
    done
    compare "copy 1080p30 ${SECONDS_OF_MEDIA}s" hlscap ffmpeg
    compare "copy 1080p30 ${SECONDS_OF_MEDIA}s, ffmpeg's output synced too" hlscap ffmpeg+sync
}

# hlscap validate on the copy-mode stream of the 1080p30 recording (300 segments of 2 s for 600 s):
# every playlist, init section and segment read and checked. The target is under 2 s.
case_validate_1080p30() {
    local input
    input=$(input_1080p30)
    "$HLSCAP" file "$input" --copy --out "$OUT/hv" --overwrite --quiet > /dev/null
    rm -f "$OUT/results-validate.txt"
    for run in $(seq "$RUNS"); do
        echo "bench: validate 1080p30 run $run/$RUNS" >&2
        measure validate sh -c "exec \"$HLSCAP\" validate $OUT/hv > $OUT/validate.report"
    done
    awk '{ print $1, $2, $3 + $4 }' "$OUT/results-validate.txt" > "$OUT/results-validate.txt.cpu"
    printf 'validate 1080p30 %ss (%s, median of %s runs): wall %.2f s (target under 2 s), cpu %.2f s, peak RSS %d KiB\n' \
        "$SECONDS_OF_MEDIA" "$(tail -n 1 "$OUT/validate.report")" "$RUNS" "$(median "$OUT/results-validate.txt" 1)" \
        "$(median "$OUT/results-validate.txt.cpu" 3)" "$(median "$OUT/results-validate.txt" 2)"
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

# Live: 60 s of 720p30 test source (pattern, flash and beep each second) against the same job in
# ffmpeg (lavfi test pattern with the same flash and beep), same x264 preset, tuning and bit rate.
# Also the publish latency: a segment's last frame captured -> playlist renamed into place.
case_live_720p30() {
    local seconds="${BENCH_LIVE_SECONDS:-60}"
    rm -f "$OUT/results-hlscap.txt" "$OUT/results-ffmpeg.txt" "$OUT/latency.log"
    for run in $(seq "$RUNS"); do
        echo "bench: live 720p30 run $run/$RUNS" >&2
        rm -rf "$OUT/hl"
        measure hlscap sh -c "exec \"$HLSCAP\" live --video test --audio test --size 1280x720 --fps 30 \
            --video-bitrate 2700k --preset veryfast --duration $seconds --out $OUT/hl --quiet --verbose \
            2>>$OUT/latency.log >/dev/null"
        rm -rf "$OUT/fl" && mkdir -p "$OUT/fl"
        measure ffmpeg ffmpeg -v error -y \
            -re -f lavfi -i "testsrc2=size=1280x720:rate=30,drawbox=color=white:thickness=fill:enable='eq(mod(n\,30)\,0)'" \
            -re -f lavfi -i "aevalsrc='if(lt(mod(t\,1)\,0.05)\,0.5*sin(2*PI*1000*t)\,0.1*sin(2*PI*440*t))':sample_rate=48000:channel_layout=stereo" \
            -t "$seconds" -c:v libx264 -preset veryfast -tune zerolatency -profile:v high \
            -b:v 2700k -maxrate 2700k -bufsize 2700k -g 60 -keyint_min 60 -sc_threshold 0 \
            -force_key_frames "expr:gte(t,n_forced*2)" -c:a aac -b:a 128k -ac 2 \
            -f hls -hls_segment_type fmp4 -hls_time 2 -hls_list_size 6 "$OUT/fl/playlist.m3u8"
    done
    compare "live 720p30 ${seconds}s" hlscap ffmpeg
    grep -o 'listed [0-9]* ms' "$OUT/latency.log" | awk '{ print $2 }' | sort -n > "$OUT/latency.ms"
    awk '{ v[NR] = $1 } END { if (NR) printf "  publish latency (last frame captured -> playlist in place): p50 %d ms, p99 %d ms over %d segments\n", v[int((NR + 1) / 2)], v[int(NR * 0.99 + 0.999)], NR }' "$OUT/latency.ms"
}

# The rungs of --ladder 720p,480p,360p with Apple's rates, as ffmpeg's -b:v options.
LADDER_RATES=(3000k 1475k 365k)

# Live ladder: 60 s of the 720p30 test source as three rungs and one audio rendition, against
# ffmpeg doing the same job (split, scale, var_stream_map) with the same x264 settings: veryfast,
# zero latency, constant bit rate with a one-second buffer, keyframes on the 2 s grid.
case_live_ladder_720p30() {
    local seconds="${BENCH_LIVE_SECONDS:-60}"
    rm -f "$OUT/results-hlscap.txt" "$OUT/results-ffmpeg.txt"
    for run in $(seq "$RUNS"); do
        echo "bench: live ladder 720p30 run $run/$RUNS" >&2
        rm -rf "$OUT/hll"
        measure hlscap "$HLSCAP" live --video test --audio test --size 1280x720 --fps 30 \
            --ladder 720p,480p,360p --preset veryfast --duration "$seconds" --out "$OUT/hll" --quiet
        rm -rf "$OUT/fll" && mkdir -p "$OUT/fll"
        measure ffmpeg ffmpeg -v error -y \
            -re -f lavfi -i "testsrc2=size=1280x720:rate=30,drawbox=color=white:thickness=fill:enable='eq(mod(n\,30)\,0)'" \
            -re -f lavfi -i "aevalsrc='if(lt(mod(t\,1)\,0.05)\,0.5*sin(2*PI*1000*t)\,0.1*sin(2*PI*440*t))':sample_rate=48000:channel_layout=stereo" \
            -t "$seconds" -filter_complex "[0:v]split=3[a][b][c];[b]scale=854:480[b480];[c]scale=640:360[c360]" \
            -map "[a]" -map "[b480]" -map "[c360]" -map 1:a \
            -c:v libx264 -preset veryfast -tune zerolatency -profile:v high -nal-hrd cbr \
            -g 60 -keyint_min 60 -sc_threshold 0 -force_key_frames "expr:gte(t,n_forced*2)" \
            -b:v:0 "${LADDER_RATES[0]}" -maxrate:v:0 "${LADDER_RATES[0]}" -bufsize:v:0 "${LADDER_RATES[0]}" \
            -b:v:1 "${LADDER_RATES[1]}" -maxrate:v:1 "${LADDER_RATES[1]}" -bufsize:v:1 "${LADDER_RATES[1]}" \
            -b:v:2 "${LADDER_RATES[2]}" -maxrate:v:2 "${LADDER_RATES[2]}" -bufsize:v:2 "${LADDER_RATES[2]}" \
            -c:a aac -b:a 128k -ac 2 \
            -f hls -hls_segment_type fmp4 -hls_time 2 -hls_list_size 6 -master_pl_name master.m3u8 \
            -var_stream_map "v:0,agroup:aud v:1,agroup:aud v:2,agroup:aud a:0,agroup:aud" "$OUT/fll/%v/playlist.m3u8"
    done
    compare "live ladder 720p30 ${seconds}s (720p, 480p, 360p + audio)" hlscap ffmpeg
}

# A 60 s 1080p30 recording transcoded into the same three rungs and audio, by hlscap and by ffmpeg
# (split, scale, var_stream_map) with the same x264 preset, rates, two-second VBV and keyframe grid.
case_file_ladder_1080p30() {
    local input="$OUT/input-1080p30-60s.mp4"
    if [ ! -s "$input" ]; then
        ffmpeg -hide_banner -v error -y -f lavfi -i "testsrc2=size=1920x1080:rate=30" \
            -f lavfi -i "sine=frequency=440:sample_rate=48000" -t 60 -c:v libx264 -preset ultrafast \
            -pix_fmt yuv420p -g 60 -b:v 8M -c:a aac -b:a 128k -ac 2 "$input.partial.mp4"
        mv "$input.partial.mp4" "$input"
    fi
    rm -f "$OUT/results-hlscap.txt" "$OUT/results-ffmpeg.txt"
    for run in $(seq "$RUNS"); do
        echo "bench: file ladder 1080p30 run $run/$RUNS" >&2
        measure hlscap "$HLSCAP" file "$input" --ladder 720p,480p,360p --preset veryfast --out "$OUT/hfl" \
            --overwrite --quiet
        rm -rf "$OUT/ffl" && mkdir -p "$OUT/ffl"
        measure ffmpeg ffmpeg -v error -y -i "$input" \
            -filter_complex "[0:v]split=3[a][b][c];[a]scale=1280:720[a720];[b]scale=854:480[b480];[c]scale=640:360[c360]" \
            -map "[a720]" -map "[b480]" -map "[c360]" -map 0:a \
            -c:v libx264 -preset veryfast -profile:v high -g 60 -keyint_min 60 -sc_threshold 0 \
            -force_key_frames "expr:gte(t,n_forced*2)" \
            -b:v:0 "${LADDER_RATES[0]}" -maxrate:v:0 "${LADDER_RATES[0]}" -bufsize:v:0 6000k \
            -b:v:1 "${LADDER_RATES[1]}" -maxrate:v:1 "${LADDER_RATES[1]}" -bufsize:v:1 2950k \
            -b:v:2 "${LADDER_RATES[2]}" -maxrate:v:2 "${LADDER_RATES[2]}" -bufsize:v:2 730k \
            -c:a aac -b:a 128k -ar 48000 -ac 2 \
            -f hls -hls_segment_type fmp4 -hls_time 2 -hls_playlist_type vod -master_pl_name master.m3u8 \
            -var_stream_map "v:0,agroup:aud v:1,agroup:aud v:2,agroup:aud a:0,agroup:aud" "$OUT/ffl/%v/playlist.m3u8"
    done
    compare "file ladder 1080p30 60s (720p, 480p, 360p + audio)" hlscap ffmpeg
}

# sample_threads PIDFILE OUT: samples every half second, until it exits, the CPU time of each thread
# of the process whose pid PIDFILE will hold, and writes to OUT each thread's last sample summed by
# name (its comm, as pthread_setname_np set it): "seconds threads name" a line. A thread that ended
# keeps what it had used when last seen.
sample_threads() {
    local pidfile="$1" out="$2" pid ticks
    ticks=$(getconf CLK_TCK)
    while [ ! -s "$pidfile" ]; do sleep 0.05; done
    pid=$(cat "$pidfile")
    : > "$out.raw"
    while kill -0 "$pid" 2>/dev/null; do
        # The name is between the first "(" and the last ")"; utime and stime are the 12th and 13th
        # fields after it.
        for stat in /proc/"$pid"/task/*/stat; do cat "$stat" 2>/dev/null; echo; done | awk -v ticks="$ticks" 'NF {
                start = index($0, "("); end = 0
                for (i = length($0); i > 0; i--) if (substr($0, i, 1) == ")") { end = i; break }
                split(substr($0, end + 2), f, " ")
                printf "%s\t%s\t%.2f\n", $1, substr($0, start + 1, end - start - 1), (f[12] + f[13]) / ticks }' \
            >> "$out.raw"
        sleep 0.5
    done
    awk -F '\t' '{ name[$1] = $2; cpu[$1] = $3 }
        END { for (tid in cpu) { sum[name[tid]] += cpu[tid]; count[name[tid]]++ }
              for (n in sum) printf "%8.2f s  %2d thread(s)  %s\n", sum[n], count[n], n }' "$out.raw" | sort -rn > "$out"
}

# The live 3-rung ladder from a 720p30 H.264+AAC file played at its pace (hlscap's --video FILE, ffmpeg's
# -re), so that both tools decode, scale and encode the same pictures; the same x264 settings as
# hlscap's ladder (veryfast, zero latency, one thread per rung, CBR with nal-hrd and a one-second
# buffer, an IDR every 2 s) and AAC at 128 kb/s, 48 kHz. Then where hlscap's CPU goes: its threads' CPU
# time just before it exits, and (with perf, one more run) its samples by library.
case_ladder_file() {
    local seconds="${BENCH_LIVE_SECONDS:-60}" input
    input=$(input_720p30)
    # No window: nothing waits at the end for deleted segments' viewers, as ffmpeg deletes none.
    rm -f "$OUT/results-hlscap.txt" "$OUT/results-ffmpeg.txt"
    for run in $(seq "$RUNS"); do
        echo "bench: ladder from a 720p30 file at its pace, run $run/$RUNS" >&2
        rm -rf "$OUT/hlf" "$OUT/hlf.pid"
        sample_threads "$OUT/hlf.pid" "$OUT/ladder-threads-$run.txt" &
        measure hlscap sh -c "echo \$\$ > $OUT/hlf.pid; exec \"$HLSCAP\" live --video $input --ladder 720p,480p,360p \
            --preset veryfast --audio-bitrate 128k --duration $seconds --window 0 --out $OUT/hlf --quiet"
        wait
        rm -rf "$OUT/flf" && mkdir -p "$OUT/flf"
        measure ffmpeg ffmpeg -v error -y -re -i "$input" -t "$seconds" \
            -filter_complex "[0:v]split=3[a][b][c];[b]scale=854:480[b480];[c]scale=640:360[c360]" \
            -map "[a]" -map "[b480]" -map "[c360]" -map 0:a \
            -c:v libx264 -threads:v 1 -preset veryfast -tune zerolatency -profile:v high -nal-hrd cbr \
            -g 60 -keyint_min 60 -sc_threshold 0 -force_key_frames "expr:gte(t,n_forced*2)" \
            -b:v:0 "${LADDER_RATES[0]}" -maxrate:v:0 "${LADDER_RATES[0]}" -bufsize:v:0 "${LADDER_RATES[0]}" \
            -b:v:1 "${LADDER_RATES[1]}" -maxrate:v:1 "${LADDER_RATES[1]}" -bufsize:v:1 "${LADDER_RATES[1]}" \
            -b:v:2 "${LADDER_RATES[2]}" -maxrate:v:2 "${LADDER_RATES[2]}" -bufsize:v:2 "${LADDER_RATES[2]}" \
            -c:a aac -b:a 128k -ar 48000 -ac 2 \
            -f hls -hls_segment_type fmp4 -hls_time 2 -hls_list_size 6 -master_pl_name master.m3u8 \
            -var_stream_map "v:0,agroup:aud v:1,agroup:aud v:2,agroup:aud a:0,agroup:aud" "$OUT/flf/%v/playlist.m3u8"
    done
    compare "ladder from a 720p30 file at its pace, ${seconds}s (720p, 480p, 360p + audio)" hlscap ffmpeg
    echo "  hlscap's threads (run $RUNS): those named hlscap are the main thread, the input thread (demuxing,"
    echo "  decoding) and the H.264 decoder's own; libdispatch's workers (\"…qos…\") scale and encode the"
    echo "  rungs (any worker, any rung), encode the sound, mux and write:"
    sed 's/^/    /' "$OUT/ladder-threads-$RUNS.txt"
    rm -rf "$OUT/hlf"
    perf record -q -e cpu-clock -F 499 -o "$OUT/ladder.perf" -- "$HLSCAP" live --video "$input" \
        --ladder 720p,480p,360p --preset veryfast --audio-bitrate 128k --duration "$seconds" --window 0 \
        --out "$OUT/hlf" --quiet 2> "$OUT/perf.err"
    echo "  hlscap's CPU by library (perf, one more run; libx264: the three encoders, libswscale: scaling,"
    echo "  libavcodec: decoding H.264 and AAC, encoding AAC; hlscap: its own code, muxing included):"
    perf report -i "$OUT/ladder.perf" --sort dso --stdio -q 2>/dev/null | awk 'NF && $1 + 0 >= 0.5 { print "    " $0 }'
}

# An hour of live media as fast as it encodes (--no-realtime), at 640x360 to keep it to minutes:
# the resident set sampled every second must not grow past its level after the first minutes.
case_live_hour() {
    local seconds="${BENCH_HOUR_SECONDS:-3600}"
    echo "bench: live ${seconds}s of 640x360 test source, unpaced" >&2
    rm -rf "$OUT/hh"
    "$HLSCAP" live --video test --audio test --size 640x360 --no-realtime --duration "$seconds" \
        --out "$OUT/hh" --quiet > /dev/null &
    local pid=$! samples="$OUT/rss.samples"
    : > "$samples"
    while kill -0 "$pid" 2>/dev/null; do
        awk '/VmRSS/ { print $2 }' "/proc/$pid/status" >> "$samples" 2>/dev/null || true
        sleep 1
    done
    wait "$pid"
    awk -v s="$seconds" '{ v[NR] = $1 } END {
        first = int(NR / 10) + 1; if (first < 10 && NR >= 10) first = 10
        early = v[first]; peak = 0; for (i = first; i <= NR; i++) if (v[i] > peak) peak = v[i]
        printf "live %ss unpaced: RSS %d KiB after the first tenth, peak %d KiB after it: growth %d KiB over %d samples\n",
            s, early, peak, peak - early, NR }' "$samples"
}

# Publishing: the same 60 s live job with and without --publish to an nginx origin on loopback.
# Prints the CPU ratio and the time from a segment being written to the origin's playlist listing it.
case_publish_720p30() {
    local seconds="${BENCH_LIVE_SECONDS:-60}" origin_log="$OUT/origin.log"
    rm -rf "$OUT/origin" && mkdir -p "$OUT/origin"
    python3 Tests/Tools/origin_server.py "$OUT/origin" > "$origin_log" 2>&1 &
    local origin_pid=$!
    local url=""
    for _ in $(seq 100); do
        url=$(awk '/^origin / { print $2 }' "$origin_log")
        [ -n "$url" ] && break
        sleep 0.1
    done
    [ -n "$url" ] || { echo "bench: nginx origin did not start" >&2; kill "$origin_pid"; return 1; }
    rm -f "$OUT/results-publish.txt" "$OUT/results-local.txt" "$OUT/publish.log"
    for run in $(seq "$RUNS"); do
        echo "bench: publish 720p30 run $run/$RUNS" >&2
        rm -rf "$OUT/hp"
        measure publish sh -c "exec \"$HLSCAP\" live --video test --audio test --size 1280x720 --fps 30 \
            --video-bitrate 2700k --duration $seconds --out $OUT/hp --quiet --publish ${url}live$run/ \
            >>$OUT/publish.log 2>&1"
        rm -rf "$OUT/hp"
        measure local "$HLSCAP" live --video test --audio test --size 1280x720 --fps 30 \
            --video-bitrate 2700k --duration "$seconds" --out "$OUT/hp" --quiet
    done
    kill "$origin_pid"; wait "$origin_pid" 2>/dev/null || true
    compare "live 720p30 ${seconds}s, --publish against --out only" publish local
    grep -h "published to" "$OUT/publish.log" | sed 's/^/  /'
}

# The ffmpeg side of the live 720p30 cases that run hlscap's own settings: a lavfi picture with a white
# flash each second and a tone with a beep at the same instants, and ffmpeg's live HLS with the same x264
# settings, keyframes on the same 2 s grid.
LIVE_FLASH_VIDEO="testsrc2=size=1280x720:rate=30,drawbox=color=white:thickness=fill:enable='eq(mod(n\,30)\,0)'"
LIVE_FLASH_AUDIO="aevalsrc='if(lt(mod(t\,1)\,0.05)\,0.5*sin(2*PI*1000*t)\,0.1*sin(2*PI*440*t))':sample_rate=48000:channel_layout=stereo"
FFMPEG_LIVE_HLS=(-c:v libx264 -preset veryfast -tune zerolatency -profile:v high -b:v 2700k -maxrate 2700k
    -bufsize 2700k -g 60 -keyint_min 60 -sc_threshold 0 -force_key_frames "expr:gte(t,n_forced*2)"
    -c:a aac -b:a 128k -ac 2 -f hls -hls_segment_type fmp4 -hls_time 2 -hls_list_size 6)

# --record's cost: live 720p30 H.264 HLS with and without a full-quality HEVC recording of the same
# capture (720p, 4 Mb/s, x265 veryfast), against ffmpeg writing the same two outputs from one input
# (HLS and a fragmented MP4; ffmpeg encodes the audio once per output, hlscap once for both).
case_live_record_720p30() {
    local seconds="${BENCH_LIVE_SECONDS:-60}"
    rm -f "$OUT"/results-record-*.txt
    for run in $(seq "$RUNS"); do
        echo "bench: live 720p30 with --record run $run/$RUNS" >&2
        rm -rf "$OUT/hr" "$OUT/hr.mp4"
        measure record-hlscap "$HLSCAP" live --video test --audio test --size 1280x720 --fps 30 \
            --video-bitrate 2700k --duration "$seconds" --out "$OUT/hr" --quiet \
            --record "$OUT/hr.mp4" --record-codec hevc --record-bitrate 4000k
        rm -rf "$OUT/hr"
        measure record-hlscap-alone "$HLSCAP" live --video test --audio test --size 1280x720 --fps 30 \
            --video-bitrate 2700k --duration "$seconds" --out "$OUT/hr" --quiet
        rm -rf "$OUT/fr" "$OUT/fr.mp4" && mkdir -p "$OUT/fr"
        measure record-ffmpeg ffmpeg -v error -y -re -f lavfi -i "$LIVE_FLASH_VIDEO" -re -f lavfi -i "$LIVE_FLASH_AUDIO" \
            -t "$seconds" -map 0:v -map 1:a "${FFMPEG_LIVE_HLS[@]}" "$OUT/fr/playlist.m3u8" \
            -t "$seconds" -map 0:v -map 1:a -c:v libx265 -preset veryfast -x265-params log-level=error -b:v 4000k -tag:v hvc1 \
            -c:a aac -b:a 128k -movflags frag_keyframe+empty_moov+default_base_moof "$OUT/fr.mp4"
        rm -rf "$OUT/fr" && mkdir -p "$OUT/fr"
        measure record-ffmpeg-alone ffmpeg -v error -y -re -f lavfi -i "$LIVE_FLASH_VIDEO" -re -f lavfi -i "$LIVE_FLASH_AUDIO" \
            -t "$seconds" -map 0:v -map 1:a "${FFMPEG_LIVE_HLS[@]}" "$OUT/fr/playlist.m3u8"
    done
    compare "live 720p30 ${seconds}s with a 720p HEVC recording" record-hlscap record-ffmpeg
    compare "  the same without the recording" record-hlscap-alone record-ffmpeg-alone
    awk -v a="$(median "$OUT/results-record-hlscap.txt.cpu" 3)" -v b="$(median "$OUT/results-record-hlscap-alone.txt.cpu" 3)" \
        -v c="$(median "$OUT/results-record-ffmpeg.txt.cpu" 3)" -v d="$(median "$OUT/results-record-ffmpeg-alone.txt.cpu" 3)" \
        'BEGIN { printf "  the recording costs hlscap %.2f s of cpu, ffmpeg %.2f s (ratio %.2f)\n", a - b, c - d, (a - b) / (c - d) }'
}

# --overlay clock on live 720p30: the CPU of a run with it against the same run without it, and beside
# it what the same drawtext (DejaVu Sans Mono, a 30 px clock on a half-dark box) costs ffmpeg.
case_overlay() {
    local seconds="${BENCH_LIVE_SECONDS:-60}"
    local font=/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf
    # %{localtime} with no format: the clock's own %Y-%m-%d %H:%M:%S.
    local clock="drawtext=fontfile=$font:expansion=normal:text='%{localtime}'"
    clock+=":fontsize=30:fontcolor=white:box=1:boxcolor=black@0.5:boxborderw=7:x=15:y=15"
    rm -f "$OUT"/results-overlay-*.txt
    for run in $(seq "$RUNS"); do
        echo "bench: live 720p30 with --overlay clock run $run/$RUNS" >&2
        rm -rf "$OUT/ho"
        measure overlay-hlscap "$HLSCAP" live --video test --audio test --size 1280x720 --fps 30 \
            --video-bitrate 2700k --preset veryfast --duration "$seconds" --out "$OUT/ho" --quiet --overlay clock
        rm -rf "$OUT/ho"
        measure overlay-hlscap-alone "$HLSCAP" live --video test --audio test --size 1280x720 --fps 30 \
            --video-bitrate 2700k --preset veryfast --duration "$seconds" --out "$OUT/ho" --quiet
        rm -rf "$OUT/fo" && mkdir -p "$OUT/fo"
        measure overlay-ffmpeg ffmpeg -v error -y -re -f lavfi -i "$LIVE_FLASH_VIDEO,$clock" -re -f lavfi -i "$LIVE_FLASH_AUDIO" \
            -t "$seconds" "${FFMPEG_LIVE_HLS[@]}" "$OUT/fo/playlist.m3u8"
        rm -rf "$OUT/fo" && mkdir -p "$OUT/fo"
        measure overlay-ffmpeg-alone ffmpeg -v error -y -re -f lavfi -i "$LIVE_FLASH_VIDEO" -re -f lavfi -i "$LIVE_FLASH_AUDIO" \
            -t "$seconds" "${FFMPEG_LIVE_HLS[@]}" "$OUT/fo/playlist.m3u8"
    done
    compare "live 720p30 ${seconds}s, --overlay clock against without" overlay-hlscap overlay-hlscap-alone
    compare "ffmpeg's live 720p30 ${seconds}s, drawtext clock against without" overlay-ffmpeg overlay-ffmpeg-alone
    awk -v a="$(median "$OUT/results-overlay-hlscap.txt.cpu" 3)" -v b="$(median "$OUT/results-overlay-hlscap-alone.txt.cpu" 3)" \
        -v c="$(median "$OUT/results-overlay-ffmpeg.txt.cpu" 3)" -v d="$(median "$OUT/results-overlay-ffmpeg-alone.txt.cpu" 3)" \
        'BEGIN { printf "  the overlay costs hlscap %.2f s of cpu (%.1f %%), ffmpeg %.2f s (%.1f %%)\n", a - b, 100 * (a - b) / b, c - d, 100 * (c - d) / d }'
}

# The built-in server against nginx serving the same stream directory: the server's CPU per 1,000
# small requests (playlists, the init section, 64 KiB byte ranges of segments) over 50 kept-alive
# connections, both servers given the same requests by one client.
case_serve_requests() {
    local input requests="${BENCH_REQUESTS:-20000}"
    input=$(input_1080p30)
    "$HLSCAP" file "$input" --copy --out "$OUT/hs" --overwrite --quiet > /dev/null
    rm -f "$OUT/results-serve-hlscap.txt" "$OUT/results-serve-nginx.txt"
    "$HLSCAP" serve "$OUT/hs" --listen 127.0.0.1:0 > /dev/null 2> "$OUT/serve.log" &
    local hlscap_pid=$!
    python3 Tests/Tools/origin_server.py "$OUT/hs" --logs "$OUT/serve-nginx" > "$OUT/serve-nginx.log" 2>&1 &
    local origin_pid=$! hlscap_url="" nginx_url=""
    trap 'kill "$hlscap_pid" "$origin_pid" 2>/dev/null' RETURN
    for _ in $(seq 100); do
        hlscap_url=$(sed -n 's|.* at \(http://[^ ]*/\)[a-z]*\.m3u8.*|\1|p' "$OUT/serve.log")
        nginx_url=$(awk '/^origin / { print $2 }' "$OUT/serve-nginx.log")
        [ -n "$hlscap_url" ] && [ -n "$nginx_url" ] && break
        sleep 0.1
    done
    if [ -z "$hlscap_url" ] || [ -z "$nginx_url" ]; then
        echo "bench: a server did not start" >&2
        kill "$hlscap_pid" "$origin_pid"
        return 1
    fi
    local nginx_pid
    nginx_pid=$(pgrep -P "$origin_pid" nginx | head -n 1)
    for run in $(seq "$RUNS"); do
        echo "bench: serve $requests requests run $run/$RUNS" >&2
        python3 Tests/Tools/request_bench.py "$hlscap_url" --pid "$hlscap_pid" --requests "$requests" \
            >> "$OUT/results-serve-hlscap.txt"
        python3 Tests/Tools/request_bench.py "$nginx_url" --pid "$nginx_pid" --requests "$requests" \
            >> "$OUT/results-serve-nginx.txt"
    done
    kill "$hlscap_pid" "$origin_pid"; wait "$hlscap_pid" "$origin_pid" 2>/dev/null || true
    python3 - "$OUT/results-serve-hlscap.txt" "$OUT/results-serve-nginx.txt" <<'PYTHON'
import json, statistics, sys
hlscap, nginx = ([json.loads(line) for line in open(path)] for path in sys.argv[1:3])
ours = statistics.median(run["cpuMsPer1000"] for run in hlscap)
theirs = statistics.median(run["cpuMsPer1000"] for run in nginx)
errors = sum(run["errors"] for run in hlscap + nginx)
print(f"serve {hlscap[0]['requests']} requests (median of {len(hlscap)} runs, {errors} errors): server CPU per "
      f"1000 requests hlscap {ours:.1f} ms, nginx {theirs:.1f} ms, ratio {ours / theirs:.2f}")
PYTHON
}

# What encryption costs: the copy of the 1080p30 recording and 60 s of live 720p30, each clear and
# with --encrypt METHOD, as CPU ratios (the goal is under 1.03); beside it ffmpeg's own AES-128
# (-hls_enc) on the same copy, into MPEG-TS segments, since ffmpeg 5.1 does not encrypt fMP4 ones
# (with a key given: Debian's build cannot make a random one).
case_encrypt() {
    local input seconds="${BENCH_LIVE_SECONDS:-60}" method
    input=$(input_1080p30)
    rm -f "$OUT"/results-enc-*.txt
    for run in $(seq "$RUNS"); do
        echo "bench: encryption, copy 1080p30 run $run/$RUNS" >&2
        measure enc-copy-clear "$HLSCAP" file "$input" --copy --out "$OUT/he" --overwrite --quiet
        for method in "${ENCRYPT_METHODS[@]}"; do
            measure "enc-copy-$method" "$HLSCAP" file "$input" --copy --out "$OUT/he" --overwrite --quiet \
                --encrypt "$method" --key-dir "$OUT/he-keys"
        done
        rm -rf "$OUT/fe" && mkdir -p "$OUT/fe"
        measure enc-ffmpeg-clear ffmpeg -v error -y -i "$input" -c copy -f hls -hls_segment_type mpegts -hls_time 2 \
            -hls_playlist_type vod "$OUT/fe/playlist.m3u8"
        rm -rf "$OUT/fe" && mkdir -p "$OUT/fe"
        measure enc-ffmpeg-aes-128 ffmpeg -v error -y -i "$input" -c copy -f hls -hls_segment_type mpegts -hls_time 2 \
            -hls_playlist_type vod -hls_enc 1 -hls_enc_key 0123456789abcdef "$OUT/fe/playlist.m3u8"
    done
    for run in $(seq "$RUNS"); do
        echo "bench: encryption, live 720p30 run $run/$RUNS" >&2
        for method in clear "${ENCRYPT_METHODS[@]}"; do
            local encrypt=""
            [ "$method" = clear ] || encrypt="--encrypt $method --key-dir $OUT/hle-keys"
            rm -rf "$OUT/hle"
            measure "enc-live-$method" sh -c "exec \"$HLSCAP\" live --video test --audio test --size 1280x720 --fps 30 \
                --video-bitrate 2700k --preset veryfast --duration $seconds --out $OUT/hle --quiet $encrypt"
        done
    done
    for method in "${ENCRYPT_METHODS[@]}"; do
        compare "copy 1080p30 ${SECONDS_OF_MEDIA}s, --encrypt $method against clear" "enc-copy-$method" enc-copy-clear
        compare "live 720p30 ${seconds}s, --encrypt $method against clear" "enc-live-$method" enc-live-clear
    done
    compare "ffmpeg's own copy 1080p30 ${SECONDS_OF_MEDIA}s into MPEG-TS, -hls_enc 1 against clear" enc-ffmpeg-aes-128 enc-ffmpeg-clear
}

# A --dvr window of 3,600 segments. CPU per playlist update: what a run with that window takes beyond
# the same run with a 6-segment window, over the segments it listed; ffmpeg the same with
# -hls_list_size 3600 against 6 (each tool against itself, so their different test pictures cancel).
# The picture is tiny, two frames a second without audio, and segments half a second, so the window
# fills in minutes of stream time encoded as fast as the machine goes, and the playlists are most of
# the work. Then the bytes a player fetches per reload once the window is
# full: hlscap's delta update (_HLS_skip=YES from --serve) against the whole playlist, which is what
# ffmpeg's players fetch.
case_dvr() {
    local segments="${BENCH_DVR_SEGMENTS:-4800}" window=3600
    local seconds=$((segments / 2)) dir="$OUT/dvr"
    local base=(live --video test --audio none --size 160x90 --fps 2 --preset veryfast --no-realtime
        --segment-duration 0.5 --overwrite --quiet)
    local hlscap_args=("${base[@]}" --duration "$seconds")
    local ffmpeg_args=(-v error -y -f lavfi -i "testsrc2=size=160x90:rate=2"
        -t "$seconds" -c:v libx264 -preset veryfast -g 1
        -f hls -hls_segment_type fmp4 -hls_time 0.5 -hls_flags delete_segments+independent_segments)
    rm -f "$OUT"/results-dvr-*.txt
    for run in $(seq "$RUNS"); do
        echo "bench: --dvr, $segments segments of 0.5 s into a window of 6 and of $window, run $run/$RUNS" >&2
        rm -rf "$dir" && mkdir -p "$dir/f6" "$dir/fdvr"
        measure dvr-hlscap-window6 "$HLSCAP" "${hlscap_args[@]}" --out "$dir/h" --window 6
        measure dvr-hlscap-dvr "$HLSCAP" "${hlscap_args[@]}" --out "$dir/h" --dvr "$((window / 2))s"
        measure dvr-ffmpeg-window6 ffmpeg "${ffmpeg_args[@]}" -hls_list_size 6 "$dir/f6/playlist.m3u8"
        measure dvr-ffmpeg-dvr ffmpeg "${ffmpeg_args[@]}" -hls_list_size "$window" "$dir/fdvr/playlist.m3u8"
    done
    local listed
    listed=$(grep -c '^#EXTINF' "$dir/h/playlist.m3u8")
    printf 'a %d-segment window, %d segments of 0.5 s listed in all (median of %s runs)\n' "$window" "$segments" "$RUNS"
    local label cpu=()
    for label in dvr-hlscap-window6 dvr-hlscap-dvr dvr-ffmpeg-window6 dvr-ffmpeg-dvr; do
        awk '{ print $1, $2, $3 + $4 }' "$OUT/results-$label.txt" > "$OUT/results-$label.txt.cpu"
        cpu+=("$(median "$OUT/results-$label.txt.cpu" 3)")
        printf '  %-20s cpu %7.2f s   peak RSS %8d KiB\n' "$label" "${cpu[-1]}" "$(median "$OUT/results-$label.txt" 2)"
    done
    awk -v h6="${cpu[0]}" -v hd="${cpu[1]}" -v f6="${cpu[2]}" -v fd="${cpu[3]}" -v n="$segments" \
        'BEGIN { h = (hd - h6) * 1000 / n; f = (fd - f6) * 1000 / n
            printf "  CPU per playlist update with the long window: hlscap %.3f ms, ffmpeg %.3f ms", h, f
            if (f > 0) printf " (hlscap/ffmpeg %.2fx)", h / f
            printf "\n" }'
    # A delta update lists the last CAN-SKIP-UNTIL seconds whatever the window, so the served run needs
    # only a window longer than that; the whole playlist's size is the long window's, from the run above.
    echo "bench: --dvr, bytes per reload from --serve" >&2
    rm -rf "$dir/served"
    "$HLSCAP" "${base[@]}" --duration 400 --out "$dir/served" --dvr 120s --serve 127.0.0.1:0 2> "$dir/served.log" &
    local pid=$! url delta=0 body
    url=$(wait_for_url "$dir/served.log" 's/.*hlscap: serving .* at \(http[^ ]*\).*/\1/p')
    while kill -0 "$pid" 2> /dev/null; do
        body=$(curl -s "$url?_HLS_skip=YES" || true)
        if grep -q '^#EXT-X-SKIP' <<< "$body" && ! grep -q ENDLIST <<< "$body"; then
            delta=$(wc -c <<< "$body")
        fi
        sleep 0.2
    done
    wait "$pid" || true
    printf '  bytes per reload: hlscap delta update %d, hlscap whole playlist of %d segments %d, ffmpeg'"'"'s (which players fetch whole) %d\n' \
        "$delta" "$listed" "$(stat -c %s "$dir/h/playlist.m3u8")" "$(stat -c %s "$dir/fdvr/playlist.m3u8")"
    [ "$listed" -eq "$window" ] || echo "  (hlscap's window listed $listed segments, not $window)"
}

# An IP camera's stream to HLS: the 1080p30 recording served over RTSP (interleaved TCP) by GStreamer's
# RTSP server from the file as it is, in real time, and packaged by copying for BENCH_RTSP_SECONDS, by
# hlscap (which copies an H.264 and AAC input unless asked to encode) and by ffmpeg
# (-rtsp_transport tcp -c copy), one after the other, each from the start of the file.
case_rtsp_copy() {
    local input seconds="${BENCH_RTSP_SECONDS:-30}" dir="$OUT/rtsp" url
    input=$(input_1080p30)
    rm -f "$OUT"/results-rtsp-*.txt
    mkdir -p "$dir"
    /usr/bin/python3 Tests/Tools/rtsp_server.py --file "$input" > "$dir/server.log" 2>&1 &
    local server=$!
    url=$(wait_for_url "$dir/server.log" 's/^serving \(rtsp:[^ ]*\)/\1/p')/file
    for run in $(seq "$RUNS"); do
        echo "bench: RTSP 1080p30 copied for ${seconds}s, run $run/$RUNS" >&2
        rm -rf "$dir/h" "$dir/f" && mkdir -p "$dir/f"
        measure rtsp-hlscap "$HLSCAP" live --video "$url" --duration "$seconds" --out "$dir/h" --quiet
        measure rtsp-ffmpeg ffmpeg -v error -y -rtsp_transport tcp -i "$url" -t "$seconds" -c copy \
            -f hls -hls_segment_type fmp4 -hls_time 2 -hls_list_size 6 "$dir/f/playlist.m3u8"
    done
    kill "$server" 2> /dev/null || true
    wait "$server" 2> /dev/null || true
    compare "RTSP 1080p30 H.264+AAC copied to live HLS, ${seconds}s" rtsp-hlscap rtsp-ffmpeg
}

# `--ladder source,480p,360p` on an RTSP 1080p30 camera: the camera's own stream copied as the top
# rung, the two below decoded once and encoded. ffmpeg does the same: rung 0 copied, the decoded
# picture split and scaled to the two heights, libx264 with hlscap's settings for those rungs (veryfast,
# zerolatency, High profile, constant rate at Apple's 480p and 360p rates, a buffer of one second, no
# scene-cut keyframes, one thread each, an IDR every 2 s where the camera has its keyframes).
case_rtsp_ladder() {
    local input seconds="${BENCH_RTSP_SECONDS:-30}" dir="$OUT/rtsp-ladder" url
    input=$(input_1080p30)
    rm -f "$OUT"/results-rtsp-ladder-*.txt
    mkdir -p "$dir"
    /usr/bin/python3 Tests/Tools/rtsp_server.py --file "$input" > "$dir/server.log" 2>&1 &
    local server=$!
    url=$(wait_for_url "$dir/server.log" 's/^serving \(rtsp:[^ ]*\)/\1/p')/file
    local x264=() stream
    for stream in 1 2; do
        x264+=(-c:v:$stream libx264 -preset:v:$stream veryfast -tune:v:$stream zerolatency -profile:v:$stream high
               -sc_threshold:v:$stream 0 -g:v:$stream 60 -keyint_min:v:$stream 60 -threads:v:$stream 1
               -force_key_frames:v:$stream 'expr:gte(t,n_forced*2)' -x264-params:v:$stream nal-hrd=cbr)
    done
    for run in $(seq "$RUNS"); do
        echo "bench: RTSP 1080p30 ladder source,480p,360p for ${seconds}s, run $run/$RUNS" >&2
        rm -rf "$dir/h" "$dir/f" && mkdir -p "$dir/f"
        measure rtsp-ladder-hlscap "$HLSCAP" live --video "$url" --ladder source,480p,360p --duration "$seconds" \
            --out "$dir/h" --quiet
        measure rtsp-ladder-ffmpeg ffmpeg -v error -y -rtsp_transport tcp -i "$url" -t "$seconds" \
            -filter_complex '[0:v]split=2[a][b];[a]scale=-2:480[v480];[b]scale=-2:360[v360]' \
            -map 0:v -map '[v480]' -map '[v360]' -map 0:a -c:v:0 copy "${x264[@]}" \
            -b:v:1 1475k -maxrate:v:1 1475k -bufsize:v:1 1475k -b:v:2 365k -maxrate:v:2 365k -bufsize:v:2 365k -c:a copy \
            -f hls -hls_segment_type fmp4 -hls_time 2 -hls_list_size 6 -master_pl_name master.m3u8 \
            -var_stream_map 'v:0,agroup:a v:1,agroup:a v:2,agroup:a a:0,agroup:a' "$dir/f/%v/playlist.m3u8"
    done
    kill "$server" 2> /dev/null || true
    wait "$server" 2> /dev/null || true
    compare "RTSP 1080p30 H.264+AAC, ladder source,480p,360p to live HLS, ${seconds}s" rtsp-ladder-hlscap rtsp-ladder-ffmpeg
}

# BENCH_STREAMS (16) RTSP 1080p30 cameras copied at once for BENCH_RTSP_SECONDS: each by its own
# hlscap, all by one `hlscap run` (a file listing the cameras), then each by its own ffmpeg, every
# stream from the server's start of the file. Reports the CPU of all of them together, their memory
# (the peak resident sets added up, and the proportional set size, which counts shared libraries
# once, read half-way through), per stream, and the fewest and most pictures a stream got against
# the seconds asked (a lost frame shows as a short stream).
case_rtsp_copy_many() {
    local input seconds="${BENCH_RTSP_SECONDS:-30}" streams="${BENCH_STREAMS:-16}" dir="$OUT/rtsp-many" url
    input=$(input_1080p30)
    rm -rf "$dir" && mkdir -p "$dir"
    /usr/bin/python3 Tests/Tools/rtsp_server.py --file "$input" > "$dir/server.log" 2>&1 &
    local server=$!
    url=$(wait_for_url "$dir/server.log" 's/^serving \(rtsp:[^ ]*\)/\1/p')/file
    echo "bench: $streams RTSP 1080p30 cameras copied at once for ${seconds}s" >&2
    {
        echo "out: $dir/hlscap-run"
        echo "defaults: {window: 0, duration: $seconds}"
        echo "streams:"
        for index in $(seq "$streams"); do echo "  cam$index: {video: \"$url\"}"; done
    } > "$dir/run.yml"
    local tool index pids
    for tool in hlscap hlscap-run ffmpeg; do
        pids=()
        if [ "$tool" = hlscap-run ]; then
            /usr/bin/time -f '%e %M %U %S' -o "$dir/time-$tool-1" "$HLSCAP" run "$dir/run.yml" \
                > /dev/null 2> "$dir/$tool.log" &
            pids+=("$!")
        fi
        for index in $(seq "$streams"); do
            [ "$tool" = hlscap-run ] && break
            mkdir -p "$dir/$tool-$index"
            if [ "$tool" = hlscap ]; then
                /usr/bin/time -f '%e %M %U %S' -o "$dir/time-$tool-$index" "$HLSCAP" live --video "$url" \
                    --duration "$seconds" --out "$dir/$tool-$index" --window 0 --quiet > /dev/null 2> "$dir/$tool-$index.log" &
            else
                /usr/bin/time -f '%e %M %U %S' -o "$dir/time-$tool-$index" ffmpeg -v error -y -rtsp_transport tcp \
                    -i "$url" -t "$seconds" -c copy -f hls -hls_segment_type fmp4 -hls_time 2 -hls_list_size 0 \
                    "$dir/$tool-$index/playlist.m3u8" 2> "$dir/$tool-$index.log" &
            fi
            pids+=("$!")
        done
        # Half-way: the proportional set size of every process /usr/bin/time started, in KiB.
        sleep $((seconds / 2))
        local pid child pss=0
        for pid in "${pids[@]}"; do
            for child in $(pgrep -P "$pid"); do
                pss=$((pss + $(awk '/^Pss:/ { print $2 }' "/proc/$child/smaps_rollup" 2> /dev/null || echo 0)))
            done
        done
        echo "$pss" > "$dir/pss-$tool"
        wait "${pids[@]}" || true
        for index in $(seq "$streams"); do
            local playlist="$dir/$tool-$index/playlist.m3u8"
            [ "$tool" = hlscap-run ] && playlist="$dir/hlscap-run/cam$index/playlist.m3u8"
            # The first figure: ffprobe lists the stream once per program of the playlist. awk reads
            # all of it (a reader that stops early fails the pipeline) and says 0 for no figure.
            { ffprobe -v error -count_packets -select_streams v:0 -show_entries stream=nb_read_packets -of csv=p=0 \
                "$playlist" 2> /dev/null || true; } | awk 'NF && !seen++ { print } END { if (!seen) print 0 }'
        done > "$dir/frames-$tool"
    done
    kill "$server" 2> /dev/null || true
    wait "$server" 2> /dev/null || true
    printf '%s RTSP 1080p30 H.264+AAC cameras copied at once, %ss each\n' "$streams" "$seconds"
    for tool in hlscap hlscap-run ffmpeg; do
        cat "$dir"/time-$tool-* | awk -v tool="$tool" -v seconds="$seconds" -v streams="$streams" -v pss="$(cat "$dir/pss-$tool")" \
            '{ cpu += $3 + $4; rss += $2 } END { printf "  %-10s cpu %7.2f s (%.2f cores)   per stream: peak RSS %6.1f MiB, PSS %6.1f MiB", tool, cpu, cpu / seconds, rss / streams / 1024, pss / streams / 1024 }'
        sort -n "$dir/frames-$tool" | awk '{ v[NR] = $1 } END { printf "   pictures per stream %d to %d\n", v[1], v[NR] }'
    done
    local ffmpeg_figures
    ffmpeg_figures="$(cat "$dir"/time-ffmpeg-* | awk '{ c += $3 + $4; r += $2 } END { print c, r }') $(cat "$dir/pss-ffmpeg")"
    for tool in hlscap hlscap-run; do
        echo "$(cat "$dir"/time-$tool-* | awk '{ c += $3 + $4; r += $2 } END { print c, r }') $(cat "$dir/pss-$tool") $ffmpeg_figures" |
            awk -v tool="$tool" '{ printf "  %s/ffmpeg: cpu time %.2fx, peak memory %.2fx, PSS %.2fx\n", tool, $1 / $4, $2 / $5, $3 / $6 }'
    done
}

# `hlscap run` with RTSP 1080p30 cameras (GStreamer's server, the bench input from its start for each
# client), three parts. BENCH_LADDER_CAMERAS (8) with `ladder: source,360p` and a recording each, for
# BENCH_RUN_SECONDS (60): frames dropped (the API's figure at the end) and whether every stream
# validates, and how long the stop after SIGINT took with its exit status. Then BENCH_STREAMS (16) copied cameras with the server: the index, the API and /metrics
# asked 200 times each (p50, p99); then a reload that adds a camera: the others' frames dropped across
# it, and how long the new one took to list its first segment.
case_run_cameras() {
    local input seconds="${BENCH_RUN_SECONDS:-60}" ladders="${BENCH_LADDER_CAMERAS:-8}" streams="${BENCH_STREAMS:-16}"
    local dir="$OUT/run-cameras" url index
    input=$(input_1080p30)
    rm -rf "$dir" && mkdir -p "$dir"
    /usr/bin/python3 Tests/Tools/rtsp_server.py --file "$input" > "$dir/server.log" 2>&1 &
    local server=$!
    url=$(wait_for_url "$dir/server.log" 's/^serving \(rtsp:[^ ]*\)/\1/p')/file
    # api FIELD BASE: "name value" for each stream of /api/v1/streams.
    api() {
        curl -s "$2api/v1/streams" | python3 -c 'import json, sys
for s in json.load(sys.stdin)["streams"]: print(s["name"], s.get(sys.argv[1]))' "$1"
    }

    echo "bench: $ladders RTSP cameras with ladder source,360p and a recording, one hlscap run, ${seconds}s" >&2
    {
        echo "out: $dir/ladder"
        echo "defaults: {window: 6, ladder: [source, 360p]}"
        echo "streams:"
        for index in $(seq "$ladders"); do echo "  cam$index: {video: \"$url\", record: $dir/rec/cam$index/%H%M%S.mp4}"; done
        echo "server: {listen: 127.0.0.1:0}"
    } > "$dir/ladder.yml"
    /usr/bin/time -f '%e %M %U %S' -o "$dir/time-ladder" "$HLSCAP" run "$dir/ladder.yml" > /dev/null 2> "$dir/ladder.log" &
    local run=$! base
    base=$(wait_for_url "$dir/ladder.log" 's|^hlscap: serving .* at \(http://[^ ]*/\) .*|\1|p')
    sleep "$seconds"
    api framesDropped "$base" > "$dir/ladder-dropped"
    # GNU time ignores SIGINT while it waits: the interrupt goes to hlscap, its child.
    local interrupted stopped
    interrupted=$(date +%s.%N)
    kill -INT "$(pgrep -P "$run")"; wait "$run" || true
    stopped=$(date +%s.%N)
    local valid=0
    for index in $(seq "$ladders"); do
        "$HLSCAP" validate "$dir/ladder/cam$index" > /dev/null 2>&1 && valid=$((valid + 1))
    done
    printf 'hlscap run, %s RTSP 1080p30 cameras, ladder source,360p and a recording each, %ss\n' "$ladders" "$seconds"
    awk -v valid="$valid" -v n="$ladders" '{ dropped += $2 } END { printf "  frames dropped %d in all; %d of %d streams validate\n", dropped, valid, n }' \
        "$dir/ladder-dropped"
    # The last line: /usr/bin/time writes the interrupted status on a line of its own before the figures.
    awk 'END { printf "  cpu %.2f s, peak RSS %.1f MiB\n", $3 + $4, $2 / 1024 }' "$dir/time-ladder"
    # Its retention wait included (16 s with window 6); GNU time says a status other than 0 on a line of its own.
    awk -v interrupted="$interrupted" -v stopped="$stopped" '/exited with non-zero status/ { status = $NF }
        END { printf "  stopped %.1f s after SIGINT, exit status %d\n", stopped - interrupted, status }' "$dir/time-ladder"

    echo "bench: $streams copied RTSP cameras and the server, one hlscap run" >&2
    write_streams() {
        {
            echo "out: $dir/many"
            echo "defaults: {window: 6}"
            echo "streams:"
            for index in $(seq "$1"); do echo "  cam$index: {video: \"$url\"}"; done
            echo "server: {listen: 127.0.0.1:0}"
        } > "$dir/many.yml"
    }
    write_streams "$streams"
    "$HLSCAP" run "$dir/many.yml" > /dev/null 2> "$dir/many.log" &
    run=$!
    base=$(wait_for_url "$dir/many.log" 's|^hlscap: serving .* at \(http://[^ ]*/\) .*|\1|p')
    sleep 15
    python3 - "$base" <<'PY' > "$dir/site-times"
import sys, time, urllib.request
base = sys.argv[1]
for path in ("", "api/v1/streams", "metrics"):
    times = []
    for _ in range(200):
        started = time.monotonic()
        with urllib.request.urlopen(base + path) as answer:
            answer.read()
        times.append((time.monotonic() - started) * 1000)
    times.sort()
    print(f"  /{path:<15} p50 {times[99]:6.2f} ms   p99 {times[197]:6.2f} ms   max {times[-1]:6.2f} ms")
PY
    api framesDropped "$base" > "$dir/before-reload"
    write_streams $((streams + 1))
    local reloaded
    reloaded=$(date +%s.%N)
    kill -HUP "$run"
    local first=""
    for _ in $(seq 300); do
        if [ -f "$dir/many/cam$((streams + 1))/playlist.m3u8" ] && grep -q '^#EXTINF' "$dir/many/cam$((streams + 1))/playlist.m3u8"; then
            first=$(date +%s.%N)
            break
        fi
        sleep 0.1
    done
    sleep 10
    api framesDropped "$base" > "$dir/after-reload"
    kill -INT "$run"; wait "$run" || true
    kill "$server" 2> /dev/null || true
    wait "$server" 2> /dev/null || true
    printf 'hlscap run, %s copied RTSP 1080p30 cameras: the server while they run (200 requests each)\n' "$streams"
    cat "$dir/site-times"
    local dropped
    dropped=$(join "$dir/before-reload" "$dir/after-reload" | awk '{ d += $3 - $2 } END { print d + 0 }')
    awk -v reloaded="$reloaded" -v first="$first" -v dropped="$dropped" -v n="$streams" 'BEGIN {
        printf "  a reload adding a camera: the other %d dropped %d frames across it; ", n, dropped
        if (first == "") print "the new one listed no segment within 30 s"
        else printf "the new one listed its first segment %.2f s after the reload\n", first - reloaded }'
}

# From an RTSP camera (keyframe every second, copied) to hls.js in low-latency mode through hlscap's
# own server: the wall clock minus the capture time of the picture on screen (EXT-X-PROGRAM-DATE-TIME,
# the time hlscap received the frame), sampled for BENCH_LATENCY_SECONDS of playback. The camera's
# own encoding and network are not in it. ffmpeg has no LL-HLS to compare with.
case_rtsp_latency() {
    local seconds="${BENCH_LATENCY_SECONDS:-45}" dir="$OUT/rtsp-latency" url entry
    rm -rf "$dir" && mkdir -p "$dir"
    /usr/bin/python3 Tests/Tools/rtsp_server.py --key-seconds 1 > "$dir/server.log" 2>&1 &
    local server=$!
    url=$(wait_for_url "$dir/server.log" 's/^serving \(rtsp:[^ ]*\)/\1/p')/h264-aac
    "$HLSCAP" live --video "$url" --serve 127.0.0.1:0 --low-latency --duration $((seconds + 30)) \
        --out "$dir/stream" --quiet > /dev/null 2> "$dir/hlscap.log" &
    local hlscap=$!
    entry=$(wait_for_url "$dir/hlscap.log" 's/.*serving .* at \(http:[^ ]*\) .*/\1/p')
    sleep 6
    echo "bench: glass-to-glass from RTSP through LL-HLS to hls.js for ${seconds}s" >&2
    python3 Tests/Tools/latency_probe.py "$entry" --hlsjs .build/hlsjs/hls.js --seconds "$seconds" > "$dir/probe.json" || true
    kill "$hlscap" "$server" 2> /dev/null || true
    wait "$hlscap" "$server" 2> /dev/null || true
    python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); print("RTSP camera (copied) to hls.js low-latency, glass-to-glass: p50 %.3f s, p95 %.3f s, max %.3f s, %d stalls" % (r["medianSeconds"], r["p95Seconds"], r["maxSeconds"], r["stalls"]))' "$dir/probe.json"
}

# pin_cores: sets the caller's server_cpu and client_cpu to commands that put a server and its client
# on a core each, when the machine has two; empty otherwise.
pin_cores() {
    server_cpu=() client_cpu=()
    if command -v taskset > /dev/null && [ "$(nproc)" -ge 2 ]; then
        server_cpu=(taskset -c 0)
        client_cpu=(taskset -c 1)
    fi
}

# wait_for_url LOG PATTERN: the first match of a sed -n PATTERN in LOG, waiting up to 10 s for it.
wait_for_url() {
    local url=""
    for _ in $(seq 100); do
        url=$(sed -n "$2" "$1" | head -n 1)
        [ -n "$url" ] && break
        sleep 0.1
    done
    echo "$url"
}

# Requests per second for one 2 s segment of a 720p stream (about 1 MB) over 200 kept-alive
# connections (wrk, BENCH_RPS_SECONDS each), from hlscap serve over HTTP, over HTTPS, over HTTP/2
# (h2load) and with a signed URL checked on every request, and from nginx serving the same folder
# over HTTP, HTTPS and HTTP/2 (one worker, sendfile, no access log); then the playlist, gzipped,
# over HTTPS and HTTP/2 from both. The servers share one core and wrk has the other, so a
# server's figure is what one core gives it. Each server's CPU time per request answered (from
# /proc, over each run) is printed too: it is steadier than requests per second on a shared machine.
# Last, every segment of the stream over HTTPS from both, one run each.
case_serve_segment_rps() {
    local seconds="${BENCH_RPS_SECONDS:-10}" connections=200 dir="$OUT/rps"
    command -v wrk > /dev/null || { echo "bench: wrk is not installed; run make deps" >&2; return 1; }
    local server_cpu client_cpu
    pin_cores
    rm -rf "$dir" && mkdir -p "$dir"
    echo "bench: segment requests per second: making a 720p stream" >&2
    # Constant 4 Mb/s with filler, so that a 2 s segment is about 1 MB (the test source alone
    # compresses to a tenth of that).
    ffmpeg -hide_banner -v error -y -f lavfi -i "testsrc2=size=1280x720:rate=30" \
        -f lavfi -i "sine=frequency=440:sample_rate=48000" -t 10 -c:v libx264 -preset ultrafast -pix_fmt yuv420p \
        -g 60 -keyint_min 60 -sc_threshold 0 -b:v 4M -minrate 4M -maxrate 4M -bufsize 4M -x264-params nal-hrd=cbr \
        -c:a aac -b:a 128k -ac 2 "$dir/input.mp4"
    "$HLSCAP" file "$dir/input.mp4" --copy --out "$dir/stream" --quiet > /dev/null
    local segment=seg/000002.m4s
    openssl req -x509 -newkey rsa:2048 -nodes -keyout "$dir/key.pem" -out "$dir/cert.pem" -days 1 \
        -subj /CN=127.0.0.1 2> /dev/null
    openssl rand -hex 32 > "$dir/sign.key"

    "${server_cpu[@]}" "$HLSCAP" serve "$dir/stream" --listen 127.0.0.1:0 > /dev/null 2> "$dir/plain.log" &
    local plain_pid=$!
    "${server_cpu[@]}" "$HLSCAP" serve "$dir/stream" --listen 127.0.0.1:0 --tls-cert "$dir/cert.pem" \
        --tls-key "$dir/key.pem" > /dev/null 2> "$dir/tls.log" &
    local tls_pid=$!
    "${server_cpu[@]}" "$HLSCAP" serve "$dir/stream" --listen 127.0.0.1:0 --auth-key "$dir/sign.key" \
        > /dev/null 2> "$dir/signed.log" &
    local signed_pid=$!
    "${server_cpu[@]}" python3 Tests/Tools/origin_server.py "$dir/stream" --static --tls-cert "$dir/cert.pem" \
        --tls-key "$dir/key.pem" > "$dir/nginx.log" 2>&1 &
    local nginx_pid=$!
    trap 'kill "$plain_pid" "$tls_pid" "$signed_pid" "$nginx_pid" 2> /dev/null' RETURN
    local at='s|.* at \(https\{0,1\}://[^ ]*/\)[a-z]*\.m3u8.*|\1|p'
    local hlscap_url hlscap_tls_url signed_base nginx_url nginx_tls_url
    hlscap_url=$(wait_for_url "$dir/plain.log" "$at")
    hlscap_tls_url=$(wait_for_url "$dir/tls.log" "$at")
    signed_base=$(wait_for_url "$dir/signed.log" "$at")
    nginx_url=$(wait_for_url "$dir/nginx.log" 's|^origin \(http://[^ ]*\) .*|\1|p')
    nginx_tls_url=$(wait_for_url "$dir/nginx.log" 's|^origin-tls \(https://[^ ]*\)|\1|p')
    if [ -z "$hlscap_url" ] || [ -z "$hlscap_tls_url" ] || [ -z "$signed_base" ] || [ -z "$nginx_url" ] \
        || [ -z "$nginx_tls_url" ]; then
        echo "bench: a server did not start" >&2
        return 1
    fi
    local signed_url
    signed_url=$("$HLSCAP" sign "$signed_base$segment" --expires 1h --key "$dir/sign.key")
    # Over HTTP/2 (h2load, one request at a time on each connection, as wrk makes them), and the
    # playlist gzipped over both, against nginx's HTTP/2 on the same TLS port.
    local names=(hlscap hlscap-tls hlscap-signed nginx nginx-tls hlscap-h2 nginx-h2
        hlscap-tls-playlist nginx-tls-playlist hlscap-h2-playlist nginx-h2-playlist)
    local urls=("$hlscap_url$segment" "$hlscap_tls_url$segment" "$signed_url" "$nginx_url$segment" "$nginx_tls_url$segment"
        "$hlscap_tls_url$segment" "$nginx_tls_url$segment" "$hlscap_tls_url"playlist.m3u8 "$nginx_tls_url"playlist.m3u8
        "$hlscap_tls_url"playlist.m3u8 "$nginx_tls_url"playlist.m3u8)
    # The process serving each run, whose CPU time is read before and after it (nginx's one worker
    # process is the child origin_server.py starts).
    local nginx_server
    nginx_server=$(pgrep -P "$nginx_pid" nginx | head -n 1)
    local servers=("$plain_pid" "$tls_pid" "$signed_pid" "$nginx_server" "$nginx_server" "$tls_pid" "$nginx_server"
        "$tls_pid" "$nginx_server" "$tls_pid" "$nginx_server")
    local ticks_per_second
    ticks_per_second=$(getconf CLK_TCK)
    for name in "${names[@]}"; do rm -f "$dir/results-$name.txt"; done
    for run in $(seq "$RUNS"); do
        for index in "${!names[@]}"; do
            local name="${names[$index]}" ticks_before
            ticks_before=$(awk '{ print $14 + $15 }' "/proc/${servers[$index]}/stat" 2> /dev/null || echo 0)
            echo "bench: $name, $connections connections, ${seconds}s, run $run/$RUNS" >&2
            local gzip=()
            [[ "$name" == *-playlist ]] && gzip=(-H 'Accept-Encoding: gzip')
            if [[ "$name" == *-h2* ]]; then
                # A count of requests, about `seconds` worth, rather than -D: stopped at a duration, h2load
                # stops reading the bodies in flight and can wait for ever on a server whose window it
                # keeps shut (nginx, 1 MB segments). A run that still hangs counts as failed.
                local count=$((connections * 4 * seconds))
                [[ "$name" == *-playlist ]] && count=$((connections * 150 * seconds))
                "${client_cpu[@]}" timeout $((seconds * 6 + 30)) h2load -t 1 -c "$connections" -m 1 -n "$count" \
                    "${gzip[@]}" "${urls[$index]}" > "$dir/h2load-$name.out" 2>&1 || echo "requests: timed out" >> "$dir/h2load-$name.out"
                # "finished in 10.00s, 812.30 req/s, …", then "requests: … N failed, N errored"; and
                # the protocol h2load used, which must be h2.
                awk '/^finished in/ { rps = $4 } /^requests:/ { bad += $10 + $12; done = $8 } /^requests: timed out/ { bad += 1 }
                    /^Application protocol:/ { if ($3 != "h2") bad += 1000000 }
                    END { print rps, bad + 0, done + 0 }' "$dir/h2load-$name.out" > "$dir/run.txt"
            else
                "${client_cpu[@]}" wrk -t 1 -c "$connections" -d "${seconds}s" --timeout 10s "${gzip[@]}" "${urls[$index]}" \
                    > "$dir/wrk.out"
                # Requests per second, then responses other than 2xx/3xx and socket errors.
                awk '/^Requests\/sec:/ { rps = $2 } /Non-2xx/ { bad += $NF } / requests in / { done = $1 }
                    /Socket errors:/ { gsub(",", ""); bad += $4 + $6 + $8 + $10 }
                    END { print rps, bad + 0, done + 0 }' "$dir/wrk.out" > "$dir/run.txt"
            fi
            # Requests per second, failures, and the server's CPU time per request answered (µs).
            local ticks_after
            ticks_after=$(awk '{ print $14 + $15 }' "/proc/${servers[$index]}/stat" 2> /dev/null || echo 0)
            awk -v ticks=$((ticks_after - ticks_before)) -v hz="$ticks_per_second" \
                '{ print $1, $2, ($3 > 0 ? ticks * 1e6 / hz / $3 : 0) }' "$dir/run.txt" >> "$dir/results-$name.txt"
        done
    done
    local bytes
    bytes=$(stat -c %s "$dir/stream/$segment")
    printf 'serve one %s-byte segment (%s) and the playlist, %d connections, %ss per run (median of %s runs)\n' \
        "$bytes" "$segment" "$connections" "$seconds" "$RUNS"
    local rps=()
    local playlist_bytes
    playlist_bytes=$(stat -c %s "$dir/stream/playlist.m3u8")
    for index in "${!names[@]}"; do
        rps[$index]=$(median "$dir/results-${names[$index]}.txt" 1)
        local size="$bytes"
        [[ "${names[$index]}" == *-playlist ]] && size="$playlist_bytes"
        awk -v name="${names[$index]}" -v rps="${rps[$index]}" -v bytes="$size" \
            '{ bad += $2 } END { printf "  %-19s %8.0f req/s  %6.2f GB/s  %d errors\n", name, rps, rps * bytes / 1e9, bad }' \
            "$dir/results-${names[$index]}.txt"
    done
    awk -v plain="${rps[0]}" -v tls="${rps[1]}" -v signed="${rps[2]}" -v nginx="${rps[3]}" -v nginx_tls="${rps[4]}" \
        -v h2="${rps[5]}" -v nginx_h2="${rps[6]}" -v tls_list="${rps[7]}" -v nginx_tls_list="${rps[8]}" \
        -v h2_list="${rps[9]}" -v nginx_h2_list="${rps[10]}" \
        'BEGIN { printf "  hlscap/nginx: HTTP %.2f, HTTPS %.2f, h2 %.2f, signed URL %.2f (against nginx over HTTP, which checks nothing)\n",
            plain / nginx, tls / nginx_tls, h2 / nginx_h2, signed / nginx
            printf "  hlscap/nginx, gzipped playlist: HTTPS %.2f, h2 %.2f\n", tls_list / nginx_tls_list, h2_list / nginx_h2_list
            printf "  hlscap signed/plain: %.2f\n", signed / plain }'
    # CPU time per request is steadier than requests per second on a shared machine.
    local cpu=()
    for index in "${!names[@]}"; do cpu[$index]=$(median "$dir/results-${names[$index]}.txt" 3); done
    awk -v tls="${cpu[1]}" -v nginx_tls="${cpu[4]}" -v h2="${cpu[5]}" -v nginx_h2="${cpu[6]}" \
        -v tls_list="${cpu[7]}" -v nginx_tls_list="${cpu[8]}" \
        'BEGIN { printf "  server CPU per request (µs), hlscap/nginx: segment HTTPS %.0f/%.0f, h2 %.0f/%.0f; playlist HTTPS %.1f/%.1f\n",
            tls, nginx_tls, h2, nginx_h2, tls_list, nginx_tls_list }'
    # Over loopback, how TCP paces one connection's answer depends on its size (about 16 full-size
    # segments of 64 KB fit a connection's congestion window), so one segment's figure can sit in a
    # band where both servers do worse or better. Every segment of the stream over HTTPS, one run each,
    # gives the spread and the median ratio.
    rm -f "$dir/sizes.txt"
    local each
    for each in "$dir"/stream/seg/*.m4s; do
        local path="seg/${each##*/}" row url
        row="$(stat -c %s "$each")"
        for url in "$hlscap_tls_url" "$nginx_tls_url"; do
            echo "bench: $path over HTTPS from $url, $connections connections, ${seconds}s" >&2
            "${client_cpu[@]}" wrk -t 1 -c "$connections" -d "${seconds}s" --timeout 10s "$url$path" > "$dir/wrk.out"
            row="$row $(awk '/^Requests\/sec:/ { print $2 }' "$dir/wrk.out")"
        done
        echo "$row" | awk '{ print $0, ($3 > 0 ? $2 / $3 : 0) }' >> "$dir/sizes.txt"
    done
    echo "  every segment over HTTPS (bytes, hlscap req/s, nginx req/s, hlscap/nginx):"
    awk '{ printf "    %9d  %6.0f  %6.0f  %.2f\n", $1, $2, $3, $4 }' "$dir/sizes.txt"
    printf '  hlscap/nginx over HTTPS, median over the segments: %.2f\n' "$(median "$dir/sizes.txt" 4)"
}

# 1,000 viewers on 100 HTTP/2 connections waiting on the next part of a live LL-HLS stream (test
# source, 0.2 s parts, over HTTPS): each connection sends 10 blocking reloads for the first part of
# the next segment (h2load, every answer logged), and the delay of each answer is from the earliest
# one, when the part was complete (target: 99% within 50 ms). Memory: h2_waiters.py opens the 100
# connections, reads the server's RSS, sends the 1,000 requests and reads it again while they wait.
case_serve_waiting_parts() {
    local dir="$OUT/waiting-parts" url msn
    command -v h2load > /dev/null || { echo "bench: h2load is not installed; run make deps" >&2; return 1; }
    local server_cpu client_cpu
    pin_cores
    rm -rf "$dir" && mkdir -p "$dir"
    openssl req -x509 -newkey rsa:2048 -nodes -keyout "$dir/key.pem" -out "$dir/cert.pem" -days 1 \
        -subj /CN=127.0.0.1 2> /dev/null
    "${server_cpu[@]}" "$HLSCAP" live --video test --audio test --size 1280x720 --serve 127.0.0.1:0 --low-latency \
        --part-duration 0.2 --tls-cert "$dir/cert.pem" --tls-key "$dir/key.pem" --duration 120 --out "$dir/stream" \
        --quiet > /dev/null 2> "$dir/hlscap.log" &
    local hlscap=$!
    trap 'kill "$hlscap" 2> /dev/null' RETURN
    url=$(wait_for_url "$dir/hlscap.log" 's/.*serving .* at \(https:[^ ]*\) .*/\1/p')
    [ -n "$url" ] || { echo "bench: hlscap live --serve did not start" >&2; return 1; }
    sleep 4
    echo "bench: 1,000 requests waiting on the next part, $RUNS runs" >&2
    rm -f "$dir/delays.txt"
    for run in $(seq "$RUNS"); do
        # The segment after the one the preload hint is in: up to one segment away, long enough for
        # h2load to open its connections first.
        msn=$(curl -sk "$url" | sed -n 's|.*PRELOAD-HINT:TYPE=PART,URI="[^"]*/0*\([0-9][0-9]*\)\.[0-9]*\.m4s".*|\1|p')
        rm -f "$dir/h2load.log"
        "${client_cpu[@]}" h2load -t 1 -c 100 -m 10 -n 1000 -H 'Accept-Encoding: gzip' --log-file "$dir/h2load.log" \
            "$url?_HLS_msn=$((msn + 1))&_HLS_part=0" > "$dir/h2load.out" 2>&1 || true
        # Log lines: start (µs since the epoch), status, duration (µs).
        python3 -c 'import sys
ends = sorted(int(f[0]) + int(f[2]) for f in (l.split() for l in open(sys.argv[1])) if f[1] == "200")
delays = [(end - ends[0]) / 1000 for end in ends] or [float("nan")]
print(len(ends), delays[len(delays) // 2], delays[max(0, -(-len(delays) * 99 // 100) - 1)], delays[-1])' \
            "$dir/h2load.log" >> "$dir/delays.txt"
    done
    "${client_cpu[@]}" /usr/bin/python3 Tests/Tools/h2_waiters.py "$url" --pid "$hlscap" > "$dir/memory.json" || true
    printf '1,000 requests on 100 h2 connections waiting on the next part (0.2 s parts, median of %s runs):\n' "$RUNS"
    printf '  answered 200: %s of 1000; delay from the earliest answer: p50 %.1f ms, p99 %.1f ms (target 50), max %.1f ms\n' \
        "$(median "$dir/delays.txt" 1)" "$(median "$dir/delays.txt" 2)" "$(median "$dir/delays.txt" 3)" "$(median "$dir/delays.txt" 4)"
    python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); print("  server RSS with the 100 connections open: %d KiB; with the 1,000 requests waiting: %d KiB (%d bytes per waiting request; %d of %d answered with the part)" % (r["rssKB"][0], r["rssKB"][1], r["bytesPerWaitingRequest"], r["ok"], r["requests"]))' "$dir/memory.json"
}

for case_function in "${CASES[@]}"; do
    "$case_function"
done
