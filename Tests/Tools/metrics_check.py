#!/usr/bin/env python3
"""Reads a Prometheus text exposition with the reference parser (prometheus_client) and prints
its samples as one JSON object: {"name{label=value,...}": value}.

Usage: metrics_check.py URL
Exit 0 when the text parses, 1 when it does not, 2 when it cannot be fetched.
"""
import json
import sys
import urllib.request

sys.dont_write_bytecode = True

try:
    from prometheus_client.parser import text_string_to_metric_families
except ImportError:
    # Debian's python3-prometheus-client (make deps) installs for the system Python, which another
    # python3 earlier on PATH does not search.
    sys.path.append("/usr/lib/python3/dist-packages")
    from prometheus_client.parser import text_string_to_metric_families


def main(argv):
    try:
        with urllib.request.urlopen(argv[0], timeout=10) as reply:
            text = reply.read().decode()
    except OSError as error:
        print(json.dumps({"error": str(error)}))
        return 2
    samples = {}
    try:
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                labels = ",".join(f"{k}={v}" for k, v in sorted(sample.labels.items()))
                samples[f"{sample.name}{{{labels}}}" if labels else sample.name] = sample.value
    except ValueError as error:
        print(json.dumps({"error": f"does not parse: {error}"}))
        return 1
    print(json.dumps(samples))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
