#!/usr/bin/env bash
# tests-side-by-side.sh [--serial] FILTER[::SKIP]...: runs the built test binary once per FILTER, all
# at the same time, and prints each run's output once it is over; fails if any run failed. A FILTER
# may name, after `::`, what it leaves out (`.*::A|B`: every test but A's and B's). With --serial each
# run takes its tests one at a time (a lane), otherwise as many at once as the machine has cores.
# `swift test` cannot do this: a second one waits for the first, which holds the build directory's lock.
# Each run's report ends with its time and the cores it used (GNU time), which is what the lanes of
# `make test` are balanced by.
set -uo pipefail

mode=()
if [ "${1:-}" = "--serial" ]; then
    mode=(--no-parallel)
    shift
fi

binary=.build/debug/hlscapPackageTests.xctest
if [ ! -x "$binary" ]; then
    echo "tests-side-by-side: $binary is missing; build the tests first (swift build --build-tests)" >&2
    exit 66
fi
logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT
pids=()
index=0
for filter in "$@"; do
    skip=()
    if [[ "$filter" == *::* ]]; then
        skip=(--skip "${filter#*::}")
    fi
    NO_COLOR=1 /usr/bin/time -o "$logs/$index.time" -f '%e %U %S' "$binary" --testing-library swift-testing "${mode[@]}" --filter "${filter%%::*}" "${skip[@]}" \
        > "$logs/$index" 2>&1 &
    pids+=($!)
    index=$((index + 1))
done
status=0
index=0
for filter in "$@"; do
    if wait "${pids[$index]}"; then result=passed; else result=failed; status=1; fi
    echo "== tests matching '$filter': $result"
    cat "$logs/$index"
    # The last line GNU time wrote: a run killed by a signal has a line about that first.
    read -r wall user system < <(tail -n 1 "$logs/$index.time")
    echo "== tests matching '$filter': $result after $wall s, $(echo "$user $system $wall" | awk '{printf "%.2f", ($1 + $2) / ($3 > 0 ? $3 : 1)}') cores"
    index=$((index + 1))
done
exit "$status"
