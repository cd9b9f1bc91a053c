#!/usr/bin/env bash
# Prints the version of the kernel the test VM boots: the newest with both /boot/vmlinuz-V and
# /lib/modules/V (the one linux-image-amd64 installed, not the one this machine runs: they differ).
# Exits 1 when there is none.
set -euo pipefail

kernel_version=""
for modules in /lib/modules/*/; do
    version="$(basename "$modules")"
    if [ -r "/boot/vmlinuz-$version" ]; then
        kernel_version="$(printf '%s\n%s\n' "$kernel_version" "$version" | sort -V | tail -n 1)"
    fi
done
[ -n "$kernel_version" ] || exit 1
echo "$kernel_version"
