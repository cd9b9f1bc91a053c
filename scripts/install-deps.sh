#!/usr/bin/env bash
# Installs the Debian packages named as arguments that are not installed yet.
# Runs apt only when something is missing, so a second run is quick and changes nothing.
set -euo pipefail

missing=()
for package in "$@"; do
    # Not `dpkg -s | grep -q`: grep leaving early can kill dpkg with SIGPIPE, and pipefail then
    # counts an installed package as missing.
    if [ "$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null)" != "install ok installed" ]; then
        missing+=("$package")
    fi
done
if [ ${#missing[@]} -eq 0 ]; then
    echo "deps: all ${#} packages installed"
    exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
    sudo=(sudo)
fi
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get -o DPkg::Lock::Timeout=600 update -q
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends "${missing[@]}"
