#!/usr/bin/env bash
# tests-side-by-side.sh [--serial] FILTER[::SKIP]...: runs the built test binary once per FILTER, all
# at the same time, and prints each run's output once it is over; fails if any run failed. A FILTER
# may name, after `::`, what it leaves out (`.*::A|B`: every test but A's and B's). With --serial each
# run takes its tests one at a time (a lane), otherwise as many at once as the machine has cores.
# `swift test` cannot do this: a second one waits for the first, which holds the build directory's lock.
# Each run's report ends with its time; the last line says how busy the machine was meanwhile (its
# cores' time from /proc/stat, background jobs included), which is what the groups of `make test` are
# balanced by.
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
# The machine's busy and total time so far, in clock ticks (the first line of /proc/stat).
cpu_ticks() { awk '/^cpu / { total = 0; for (i = 2; i <= NF; i++) total += $i; print total - $5 - $6, total; exit }' /proc/stat; }
read -r busy_before total_before < <(cpu_ticks)
started=$SECONDS
trap 'rm -rf "$logs"' EXIT
pids=()
index=0
for filter in "$@"; do
    skip=()
    if [[ "$filter" == *::* ]]; then
        skip=(--skip "${filter#*::}")
    fi
    NO_COLOR=1 "$binary" --testing-library swift-testing "${mode[@]}" --filter "${filter%%::*}" "${skip[@]}" \
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
    echo "== tests matching '$filter': $result"
    index=$((index + 1))
done
read -r busy_after total_after < <(cpu_ticks)
echo "== $# run(s) side by side took $((SECONDS - started)) s; the machine was busy" \
    "$(awk -v busy=$((busy_after - busy_before)) -v total=$((total_after - total_before)) -v cores="$(nproc)" \
        'BEGIN { printf "%.2f of %d cores", (total > 0 ? busy / total * cores : 0), cores }')"
exit "$status"
