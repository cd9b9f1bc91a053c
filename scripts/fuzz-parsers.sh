#!/usr/bin/env bash
# Runs every parser fuzzer built from Fuzz/ (make fuzz-parsers, make test-fuzz-parsers): first each
# committed input of Fuzz/Corpus/<target>/ once, which must all pass, then SECONDS of fuzzing from
# them. New inputs go to .build/fuzz-corpus/<target>/, crashes, timeouts and out-of-memory inputs to
# .build/fuzz-crashes/. Every target runs even after one fails; the exit status is 1 if any did.
# Targets named after SECONDS run alone. With FUZZ_PARSER_RUNS set, each target instead makes that
# many runs from a fixed seed, into an empty scratch directory: the same inputs every time, so that
# what `make test` runs passes or fails alike on every machine.
set -euo pipefail

seconds=${1:?usage: fuzz-parsers.sh SECONDS [TARGET...]}
shift
binaries=.build/fuzz/debug
crashes=.build/fuzz-crashes
logs=.build/fuzz-logs
mkdir -p "$crashes" "$logs"
# A Swift runtime error under AddressSanitizer: the runtime's backtracer, left on, reads the stack
# in a way ASan reports as its own error, which hides the real one; libFuzzer prints the stack.
export SWIFT_BACKTRACE=enable=no
# An input that runs longer than FUZZ_PARSER_TIMEOUT seconds (10) is a hang. libFuzzer counts wall-clock
# time: `make test` runs the fuzzers at idle priority beside the real-time tests and allows 60.
# Swift seeds its hashing per process, which moves the coverage libFuzzer steers by: a fixed -seed
# only makes the same inputs when the hashing is fixed too.
export SWIFT_DETERMINISTIC_HASHING=1

failed=()
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=($(ls Fuzz/Corpus))
fi
for target in "${targets[@]}"; do
    corpus=Fuzz/Corpus/$target
    scratch=.build/fuzz-corpus/$target
    budget=(-max_total_time="$seconds")
    if [ -n "${FUZZ_PARSER_RUNS:-}" ]; then
        scratch=.build/fuzz-corpus-seeded/$target
        rm -rf "$scratch"
        budget=(-seed=1 -runs="$FUZZ_PARSER_RUNS")
    fi
    mkdir -p "$scratch"
    options=(-timeout="${FUZZ_PARSER_TIMEOUT:-10}" -rss_limit_mb=2048 -artifact_prefix="$crashes/$target-" -print_final_stats=1)
    echo "== $target: the committed corpus ($(ls "$corpus" | wc -l) inputs)"
    if ! "$binaries/$target" "${options[@]}" -runs=0 "$corpus" > "$logs/$target.log" 2>&1; then
        tail -n 40 "$logs/$target.log"
        failed+=("$target (corpus)")
        continue
    fi
    echo "== $target: ${budget[*]}"
    if "$binaries/$target" "${options[@]}" "${budget[@]}" "$scratch" "$corpus" >> "$logs/$target.log" 2>&1; then
        runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$logs/$target.log" | tail -n 1)
        rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$logs/$target.log" | tail -n 1)
        echo "   $runs runs, $rate per second, $(ls "$scratch" | wc -l) inputs in $scratch"
    else
        grep -E '^(==[0-9]+==|SUMMARY|Fatal error|.*Fatal error:|artifact_prefix)' "$logs/$target.log" | tail -n 10 || true
        failed+=("$target")
    fi
done

if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz-parsers: failed: ${failed[*]} (logs in $logs/, inputs in $crashes/)"
    exit 1
fi
echo "fuzz-parsers: every target passed"
