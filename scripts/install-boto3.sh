#!/usr/bin/env bash
# Puts boto3 (from PyPI, version pinned) in a virtual environment at .build/python, for the tools
# that read back what hlscap publishes to an object store (Tests/Tools/s3_check.py). Debian's
# python3 stays as it is; a second run changes nothing.
set -euo pipefail

venv=.build/python
version=1.44.8
if [ -x "$venv/bin/python3" ] && "$venv/bin/python3" -c "import boto3, sys; sys.exit(boto3.__version__ != '$version')" 2>/dev/null; then
    exit 0
fi
rm -rf "$venv"
/usr/bin/python3 -m venv "$venv"
"$venv/bin/python3" -m pip install --quiet --disable-pip-version-check "boto3==$version"
echo "install-boto3: boto3 $version in $venv"
