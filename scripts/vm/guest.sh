#!/usr/bin/env bash
# Runs as root inside the test VM, started by init through the run's entry.sh: loads the capture
# drivers, mounts the output share, runs the command and records its output and exit status in
# the control share, where scripts/vm/run-in-vm.sh reads them after the VM stops.
# Usage: guest.sh REPO TIMEOUT_SECONDS OUT_DIR COMMAND...   (OUT_DIR is empty for no share)
set -u

repo="$1"
timeout_seconds="$2"
out_dir="$3"
shift 3
control=/run/vm-ctl
p9_options=trans=virtio,version=9p2000.L,msize=512000

uptime_seconds() { cut -d' ' -f1 /proc/uptime; }

fail() {
    echo "vm-guest: $*"
    exit 1
}

# One webcam-like capture node, /dev/video0: YUYV first, discrete sizes from 320x180, 1-60 fps.
modprobe vivid n_devs=1 node_types=0x1 num_inputs=1 input_types=0 multiplanar=1 \
    || fail "cannot load vivid"
# Card 0 "Loopback": what is played into hw:Loopback,0,N is captured from hw:Loopback,1,N.
modprobe snd-aloop index=0 || fail "cannot load snd-aloop"

if [ -n "$out_dir" ]; then
    mkdir -p "$out_dir" && mount -t 9p -o "$p9_options" vmout "$out_dir" \
        || fail "cannot mount the output share at $out_dir"
    export OUT="$out_dir"
fi
cd "$repo" || fail "no repository at $repo"

started="$(uptime_seconds)"
echo "$started" > "$control/ready-seconds"
timeout --kill-after=5 "$timeout_seconds" "$@" </dev/null >"$control/stdout" 2>"$control/stderr"
status=$?
echo "$started $(uptime_seconds)" | awk '{ printf "%.1f\n", $2 - $1 }' > "$control/command-seconds"
echo "$status" > "$control/status"
