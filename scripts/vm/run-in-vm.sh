#!/usr/bin/env bash
# Runs a command as root inside a qemu VM under software emulation that boots Debian's kernel
# (linux-image-amd64) on the host's own root filesystem, shared read-only over virtio-9p beneath
# a tmpfs overlay, with real capture drivers loaded: vivid (/dev/video0, a V4L2 webcam) and
# snd-aloop (ALSA card "Loopback": play into hw:Loopback,0,0, capture from hw:Loopback,1,0).
#
# Usage: scripts/vm/run-in-vm.sh [--out HOSTDIR] [--timeout SECONDS] -- COMMAND...
#   --out HOSTDIR   shared writable at the same path inside the VM; $OUT names it there
#   --timeout S     limit for the command inside the VM (default 300)
# The command runs in the repository root with a clean environment (PATH, HOME=/root); its stdout
# and stderr are printed after the VM stops, and the run's timings go to stderr.
# Exit status: the command's own; 124 if it timed out; 125 if the VM failed (kernel missing, boot
# or driver failure, or the VM overran its deadline); 64 for bad usage.
# Needs qemu-system-x86, linux-image-amd64, busybox-static, cpio and kmod (see make test-devices).
set -euo pipefail

readonly EXIT_USAGE=64
readonly EXIT_TIMEOUT=124
readonly EXIT_VM_FAILED=125
# Boot and driver loading take about 5 s under TCG; the rest is headroom for a loaded machine.
readonly BOOT_ALLOWANCE_SECONDS=120
readonly CONSOLE_TAIL_LINES=40

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
cache="$repo/.build/vm"

usage() {
    echo "usage: $0 [--out HOSTDIR] [--timeout SECONDS] -- COMMAND..." >&2
    exit "$EXIT_USAGE"
}

out_dir=""
timeout_seconds=300
while [ $# -gt 0 ]; do
    case "$1" in
        --out) [ $# -ge 2 ] || usage; out_dir="$2"; shift 2 ;;
        --timeout) [[ $# -ge 2 && "$2" =~ ^[1-9][0-9]*$ ]] || usage; timeout_seconds="$2"; shift 2 ;;
        --) shift; break ;;
        -*) usage ;;
        *) break ;;
    esac
done
[ $# -gt 0 ] || usage

if ! kernel_version="$("$here/kernel-version.sh")"; then
    echo "run-in-vm: no kernel with modules in /boot and /lib/modules; install linux-image-amd64" >&2
    exit "$EXIT_VM_FAILED"
fi

mkdir -p "$cache"
initramfs="$cache/initramfs-$kernel_version.cpio.gz"
stale=false
for input in "$here/init" "$here/build-initramfs.sh" /bin/busybox "/lib/modules/$kernel_version/modules.dep"; do
    if [ ! -e "$initramfs" ] || [ "$input" -nt "$initramfs" ]; then
        stale=true
    fi
done
if $stale; then
    "$here/build-initramfs.sh" "$kernel_version" "$initramfs"
fi

run_dir="$(mktemp -d "$cache/run.XXXXXX")"
control="$run_dir/control"
console_log="$run_dir/console.log"
mkdir -p "$control"

# qemu reads a doubled comma as a comma inside an option value.
shares=(-virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap"
        -virtfs "local,path=${control//,/,,},mount_tag=vmctl,security_model=none")
if [ -n "$out_dir" ]; then
    mkdir -p "$out_dir"
    out_dir="$(realpath "$out_dir")"
    shares+=(-virtfs "local,path=${out_dir//,/,,},mount_tag=vmout,security_model=none")
fi
{
    printf 'exec /bin/bash'
    printf ' %q' "$here/guest.sh" "$repo" "$timeout_seconds" "$out_dir" "$@"
    printf '\n'
} > "$control/entry.sh"

qemu_pid=""
# A failed VM's run directory stays for its console log; every other run leaves nothing behind.
keep_run_dir=false
clean_up() {
    if [ -n "$qemu_pid" ] && kill -0 "$qemu_pid" 2>/dev/null; then
        kill "$qemu_pid" 2>/dev/null || true
        wait "$qemu_pid" 2>/dev/null || true
    fi
    $keep_run_dir || rm -rf "$run_dir"
}
trap clean_up EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

vm_started=$SECONDS
# The outer timeout is the backstop that keeps a hung kernel or driver from hanging the caller.
timeout --kill-after=10 "$((timeout_seconds + BOOT_ALLOWANCE_SECONDS))" \
    qemu-system-x86_64 -machine q35 -accel tcg -cpu max -m 2G -smp 2 \
    -nodefaults -display none -no-reboot -serial "file:$console_log" \
    -kernel "/boot/vmlinuz-$kernel_version" -initrd "$initramfs" \
    -append "console=ttyS0 panic=-1 quiet" \
    "${shares[@]}" </dev/null &
qemu_pid=$!
qemu_status=0
wait "$qemu_pid" || qemu_status=$?
qemu_pid=""
vm_seconds=$((SECONDS - vm_started))

[ -f "$control/stdout" ] && cat "$control/stdout"
[ -f "$control/stderr" ] && cat "$control/stderr" >&2

if [ ! -f "$control/status" ]; then
    if [ "$qemu_status" -eq "$EXIT_TIMEOUT" ]; then
        echo "run-in-vm: the VM overran its ${timeout_seconds}+${BOOT_ALLOWANCE_SECONDS} s deadline and was stopped" >&2
    else
        echo "run-in-vm: the VM stopped (qemu status $qemu_status) before the command finished" >&2
    fi
    echo "run-in-vm: last lines of $console_log:" >&2
    tail -n "$CONSOLE_TAIL_LINES" "$console_log" >&2 || true
    keep_run_dir=true
    exit "$EXIT_VM_FAILED"
fi

status="$(cat "$control/status")"
echo "run-in-vm: kernel $kernel_version booted with drivers in $(cat "$control/ready-seconds") s," \
    "command ran $(cat "$control/command-seconds") s (status $status), VM total ${vm_seconds} s" >&2
if [ "$status" -eq "$EXIT_TIMEOUT" ]; then
    echo "run-in-vm: the command overran its ${timeout_seconds} s limit" >&2
fi
exit "$status"
