#!/usr/bin/env bash
# background.sh start NAME COMMAND...: runs COMMAND in the background at the lowest CPU and I/O
#   priority (SCHED_IDLE in an autogroup of nice 19, the idle I/O class): it gets only the time the
#   foreground leaves, so a test that times a live capture beside it keeps its timing, and a build or
#   a fuzz run finishes while the real-time tests wait on their clocks. Its output goes to
#   .build/background/NAME.log. A job of the same NAME still running is stopped first.
# background.sh wait NAME: waits for the job, prints its output, and exits with its status.
# background.sh stop NAME: stops the job if it is still running.
set -uo pipefail
cd "$(dirname "$0")/.."

readonly jobs=.build/background
usage() {
    echo "usage: $0 start NAME COMMAND... | wait NAME | stop NAME" >&2
    exit 64
}
[ $# -ge 2 ] || usage
action="$1"
name="$2"
shift 2
log="$jobs/$name.log"
status="$jobs/$name.status"
pidfile="$jobs/$name.pid"

stop() {
    if [ -f "$pidfile" ]; then
        # The job leads its own process group (setsid): the group goes with it, compilers included.
        kill -TERM -- "-$(cat "$pidfile")" 2>/dev/null || true
        rm -f "$pidfile"
    fi
}

case "$action" in
start)
    [ $# -ge 1 ] || usage
    mkdir -p "$jobs"
    stop
    rm -f "$status"
    # The exit status goes through a second file, so that `wait` never reads a half-written one.
    # setsid makes the job a session of its own, which the kernel's autogroup scheduling (on in
    # Debian's kernel) would weigh as much as the whole foreground, whatever the job's own priority:
    # the job's autogroup is set to nice 19 first.
    setsid bash -c 'log="$0" status="$1"; shift; { echo 19 > /proc/self/autogroup; } 2> /dev/null
        chrt --idle 0 ionice -c 3 "$@" > "$log" 2>&1
        echo $? > "$status.new"; mv "$status.new" "$status"' "$log" "$status" "$@" < /dev/null > /dev/null 2>&1 &
    echo $! > "$pidfile"
    echo "background: $name started at idle priority (output in $log)"
    ;;
wait)
    [ -f "$pidfile" ] || [ -f "$status" ] || { echo "background: no job named $name was started" >&2; exit 66; }
    started=$SECONDS
    while [ ! -f "$status" ]; do
        if ! kill -0 "$(cat "$pidfile" 2>/dev/null)" 2>/dev/null && [ ! -f "$status" ]; then
            sleep 1
            [ -f "$status" ] && break
            echo "background: $name ended without an exit status (killed?); its output:" >&2
            cat "$log" >&2
            exit 70
        fi
        sleep 1
    done
    rm -f "$pidfile"
    code="$(cat "$status")"
    echo "== background job $name (waited $((SECONDS - started)) s for it): exit $code"
    cat "$log"
    exit "$code"
    ;;
stop)
    stop
    ;;
*)
    usage
    ;;
esac
