#!/usr/bin/env bash
# Rewrites the golden copy-mode outputs under Fixtures/golden/ from the committed inputs.
# Usage: scripts/make-golden.sh [FIXTURE...]   (default: GOLDEN_FIXTURES below)
# Each input Fixtures/NAME.EXT becomes Fixtures/golden/NAME-EXT/ (the extension keeps
# h264-aac.mp4 and h264-aac.mkv apart).
set -euo pipefail
cd "$(dirname "$0")/.."

GOLDEN_FIXTURES=(
    h264-aac.mp4
    h264-bframes-aac.mp4
    aac-priming-editlist.mp4
    video-only.mp4
    audio-only.m4a
    long-gop.mp4
    h264-aac.mkv
    h264-aac.ts
    flash-beep.mp4
    hevc-portrait.mov
    hevc-hlg.ts
    hevc-pq.mp4
)
HLSCAP="${HLSCAP_BIN:-.build/debug/hlscap}"

if [ $# -gt 0 ]; then
    GOLDEN_FIXTURES=("$@")
fi
for fixture in "${GOLDEN_FIXTURES[@]}"; do
    name="${fixture%.*}-${fixture##*.}"
    out="Fixtures/golden/$name"
    rm -rf "$out"
    echo "golden: Fixtures/$fixture -> $out"
    "$HLSCAP" file "Fixtures/$fixture" --copy --out "$out"
    if [ ! -s "$out/playlist.m3u8" ] || [ ! -s "$out/init.mp4" ]; then
        echo "golden: $HLSCAP wrote no playlist.m3u8 and init.mp4 in $out" >&2
        exit 1
    fi
done
