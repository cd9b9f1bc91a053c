#!/usr/bin/env bash
# Puts a low-latency-capable hls.js (1.6.x, an ES module) at .build/hlsjs/hls.js for the latency
# tests. npm is out of reach here, but PyPI's gradio wheel bundles hls.js as a module whose exports
# are `n` = isSupported() and `t` = attach(video, url, onParsed), which returns an Hls with
# lowLatencyMode on. The wheel's version is pinned because those export names are not stable.
set -euo pipefail

target=.build/hlsjs/hls.js
version=6.31.0
if [ -s "$target" ]; then
    exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -m pip download --quiet --no-deps --disable-pip-version-check "gradio==$version" -d "$work"
unzip -q -j "$work"/gradio-"$version"-*.whl 'gradio/templates/frontend/assets/hls-*.js' -d "$work/assets"
mkdir -p "$(dirname "$target")"
cp "$work"/assets/hls-*.js "$target"
grep -q 'lowLatencyMode' "$target" || { echo "fetch-hlsjs: $target is not hls.js" >&2; exit 1; }
echo "fetch-hlsjs: hls.js from gradio $version in $target"
