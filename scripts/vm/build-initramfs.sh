#!/usr/bin/env bash
# Builds the test VM's initramfs: static busybox, scripts/vm/init as /init, and the kernel
# modules that init needs before it can reach the host's root over virtio-9p.
# Usage: scripts/vm/build-initramfs.sh KERNEL_VERSION OUTPUT.cpio.gz
set -euo pipefail

kernel_version="$1"
output="$2"
here="$(cd "$(dirname "$0")" && pwd)"
busybox=/bin/busybox
# Everything else, vivid and snd-aloop included, is loaded later from the host's /lib/modules.
boot_modules=(virtio_pci 9pnet_virtio 9p overlay)

staging="$(mktemp -d "${output}.staging.XXXXXX")"
trap 'rm -rf "$staging"' EXIT
mkdir -p "$staging/bin" "$staging/modules"
cp "$busybox" "$staging/bin/busybox"
install -m 0755 "$here/init" "$staging/init"

# modprobe lists each module after its dependencies; init loads them in that order with insmod.
for module in "${boot_modules[@]}"; do
    modprobe --set-version "$kernel_version" --show-depends "$module"
done | awk '$1 == "insmod" && !seen[$2]++ { print $2 }' | while read -r path; do
    case "$path" in
        *.ko) ;;
        *) echo "build-initramfs: $path is compressed; busybox insmod needs plain .ko files" >&2; exit 1 ;;
    esac
    cp "$path" "$staging/modules/"
    basename "$path" >> "$staging/modules/load-order"
done

(cd "$staging" && find . -print0 | LC_ALL=C sort -z | cpio --null --create --format=newc --quiet) \
    | gzip -1 > "$output.partial"
mv "$output.partial" "$output"
