#!/usr/bin/env python3
"""Walks the Low-Latency HLS flows of RFC 8216bis 6.2.5 against a live server and reports them.

Usage: llhls_client.py URL [--parts N] [--timeout S]

URL is a media playlist served with EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES. The client checks:
- blocking: for N parts in a row, a blocking reload for the hinted part (_HLS_msn/_HLS_part) and
  a GET of the hinted part are sent together; both wait for the same part, so the reload must
  answer within 50 ms of the part's bytes ("reloadAfterPartMs", the largest lag);
- badRequests: _HLS_part without _HLS_msn, _HLS_msn three segments ahead, and malformed values
  are answered 400;
- delta: a delta update (_HLS_skip=YES) at a position, merged with the full playlist at the same
  position, equals the full playlist (and skips at least one segment);
- hint: the bytes of the hinted part equal the part fetched again later by its URI, and they are
  sent as the part is made: the first come at least 100 ms before the last ("firstBytesBeforeWholeMs",
  the median over the hinted parts);
- concatenation: the parts of a completed segment, concatenated, equal the segment file.
Prints one JSON line with each check's result and exits 0 when all pass, 1 otherwise.
"""
import argparse
import concurrent.futures
import json
import re
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

sys.dont_write_bytecode = True

REQUEST_TIMEOUT = 15
RELOAD_LAG_LIMIT_MS = 50


def fetch(url, timeout=REQUEST_TIMEOUT):
    """(status, body bytes, monotonic time the body was complete)."""
    request = urllib.request.Request(url, headers={"Accept-Encoding": "identity"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as reply:
            body = reply.read()
            return reply.status, body, time.monotonic()
    except urllib.error.HTTPError as error:
        return error.code, error.read(), time.monotonic()


def fetch_timed(url, timeout=REQUEST_TIMEOUT):
    """(status, body bytes, monotonic time of the body's first byte, time it was complete)."""
    request = urllib.request.Request(url, headers={"Accept-Encoding": "identity"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as reply:
            first = reply.read(1)
            first_time = time.monotonic()
            body = first + reply.read()
            return reply.status, body, first_time, time.monotonic()
    except urllib.error.HTTPError as error:
        now = time.monotonic()
        return error.code, error.read(), now, now


FIRST_BYTES_LEAD_MS = 100


def with_query(url, **query):
    parts = urllib.parse.urlsplit(url)
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, parts.path, urllib.parse.urlencode(query), ""))


def attributes(line):
    return {key: value.strip('"') for key, value in re.findall(r'([A-Z0-9-]+)=("[^"]*"|[^,]*)', line)}


def parse(text):
    """The playlist's header tags, segment entries (tag lines + URI), trailing parts and hint."""
    playlist = {"header": [], "segments": [], "parts": [], "hint": None, "skipped": 0, "sequence": 0}
    pending = []
    for line in text.splitlines():
        if line.startswith("#EXT-X-MEDIA-SEQUENCE:"):
            playlist["sequence"] = int(line.split(":", 1)[1])
        if line.startswith("#EXT-X-SKIP:"):
            playlist["skipped"] = int(attributes(line)["SKIPPED-SEGMENTS"])
        elif line.startswith("#EXT-X-PRELOAD-HINT:"):
            playlist["hint"] = attributes(line)["URI"]
        elif line.startswith("#EXT-X-RENDITION-REPORT") or line == "#EXT-X-ENDLIST":
            pass
        elif line.startswith(("#EXTINF", "#EXT-X-PART:", "#EXT-X-PROGRAM-DATE-TIME", "#EXT-X-MAP",
                              "#EXT-X-DISCONTINUITY")) or (line and not line.startswith("#")):
            pending.append(line)
            if not line.startswith("#"):
                playlist["segments"].append(pending)
                pending = []
        elif line:
            playlist["header"].append(line)
    playlist["parts"] = [attributes(line)["URI"] for line in pending if line.startswith("#EXT-X-PART:")]
    return playlist


def segment_entries_without_parts(entries):
    return [[line for line in entry if not line.startswith(("#EXT-X-PART:", "#EXT-X-MAP"))] for entry in entries]


def position_of(uri):
    match = re.search(r"(\d{6})\.(\d+)\.m4s$", uri)
    return int(match.group(1)), int(match.group(2))


def check_blocking(url, count):
    """Largest lag of a blocking reload behind the GET of the same hinted part."""
    lags = []
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=2)
    _, body, _ = fetch(url)
    hint = parse(body.decode())["hint"]
    hinted = {}
    leads = []
    for _ in range(count):
        msn, part = position_of(hint)
        part_future = pool.submit(fetch_timed, urllib.parse.urljoin(url, hint))
        reload_future = pool.submit(fetch, with_query(url, _HLS_msn=msn, _HLS_part=part))
        part_status, part_body, first_time, part_time = part_future.result()
        leads.append((part_time - first_time) * 1000)
        reload_status, reload_body, reload_time = reload_future.result()
        if part_status != 200 or reload_status != 200:
            return {"ok": False, "error": f"part {hint} answered {part_status}, reload {reload_status}"}
        listed = parse(reload_body.decode())
        all_parts = [uri for entry in listed["segments"] for uri in
                     (attributes(l)["URI"] for l in entry if l.startswith("#EXT-X-PART:"))] + listed["parts"]
        if hint not in all_parts:
            return {"ok": False, "error": f"the reload for {hint} does not list it"}
        hinted[hint] = part_body
        lags.append((reload_time - part_time) * 1000)
        hint = listed["hint"]
        if hint is None:
            break
    worst = max(lags)
    # The bytes a blocked GET of the hint received are the part's bytes, as fetched again now.
    mismatched = [uri for uri, body in hinted.items() if fetch(urllib.parse.urljoin(url, uri))[1] != body]
    lead = sorted(leads)[len(leads) // 2]
    hint = {"ok": bool(hinted) and not mismatched and lead >= FIRST_BYTES_LEAD_MS, "compared": len(hinted),
            "mismatched": mismatched, "firstBytesBeforeWholeMs": round(lead, 1)}
    return {"ok": worst <= RELOAD_LAG_LIMIT_MS and len(lags) == count, "reloadAfterPartMs": round(worst, 1),
            "parts": len(lags)}, hint


def check_bad_requests(url, last_msn):
    cases = {
        "partWithoutMsn": with_query(url, _HLS_part=0),
        "msnTooFarAhead": with_query(url, _HLS_msn=last_msn + 3),
        "msnNotANumber": with_query(url, _HLS_msn="x"),
        "negativePart": with_query(url, _HLS_msn=last_msn, _HLS_part=-1),
        "badSkip": with_query(url, _HLS_skip="maybe"),
    }
    statuses = {name: fetch(case, timeout=5)[0] for name, case in cases.items()}
    return {"ok": all(status == 400 for status in statuses.values()), "statuses": statuses}


def check_delta(url, segments_needed=8):
    deadline = time.monotonic() + 40
    while True:
        playlist = parse(fetch(url)[1].decode())
        if len(playlist["segments"]) >= segments_needed or time.monotonic() > deadline:
            break
        time.sleep(1)
    last = playlist["sequence"] + len(playlist["segments"]) - 1
    full = parse(fetch(with_query(url, _HLS_msn=last))[1].decode())
    delta = parse(fetch(with_query(url, _HLS_msn=last, _HLS_skip="YES"))[1].decode())
    skipped = delta["skipped"]
    if full["sequence"] != delta["sequence"]:
        # The window moved between the two requests: try once more.
        return None
    merged = full["segments"][:skipped] + delta["segments"]
    same = segment_entries_without_parts(merged) == segment_entries_without_parts(full["segments"])
    return {"ok": same and skipped > 0, "skipped": skipped, "segments": len(full["segments"])}


def check_concatenation(url):
    """The parts of the newest completed segment that lists them all, concatenated, equal its file."""
    playlist = parse(fetch(url)[1].decode())
    for entry in reversed(playlist["segments"]):
        parts = [attributes(l)["URI"] for l in entry if l.startswith("#EXT-X-PART:")]
        if not parts or position_of(parts[0])[1] != 0:
            continue
        bodies = [fetch(urllib.parse.urljoin(url, uri)) for uri in parts]
        if any(status != 200 for status, _, _ in bodies):
            return {"ok": False, "error": "a listed part is not served"}, {"ok": False}
        segment_status, segment, _ = fetch(urllib.parse.urljoin(url, entry[-1]))
        joined = b"".join(body for _, body, _ in bodies)
        return {"ok": segment_status == 200 and joined == segment, "parts": len(parts),
                "segmentBytes": len(segment), "partBytes": len(joined)}
    return {"ok": False, "error": "no completed segment lists all its parts"}


def run(url, parts):
    deadline = time.monotonic() + 30
    while True:
        status, body, _ = fetch(url)
        if status == 200 and b"#EXT-X-PART:" in body:
            break
        if time.monotonic() > deadline:
            return {"ok": False, "error": f"{url} lists no parts"}
        time.sleep(0.5)
    report = {}
    blocking = check_blocking(url, parts)
    if isinstance(blocking, dict):
        report["blocking"], report["hint"] = blocking, {"ok": False}
    else:
        report["blocking"], report["hint"] = blocking
    playlist = parse(fetch(url)[1].decode())
    report["badRequests"] = check_bad_requests(url, playlist["sequence"] + len(playlist["segments"]) - 1)
    delta = None
    for _ in range(3):
        delta = check_delta(url)
        if delta is not None:
            break
    report["delta"] = delta or {"ok": False, "error": "the window kept moving"}
    report["concatenation"] = check_concatenation(url)
    report["ok"] = all(check.get("ok") for check in report.values() if isinstance(check, dict))
    return report


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url")
    parser.add_argument("--parts", type=int, default=20)
    args = parser.parse_args(argv)
    report = run(args.url, args.parts)
    print(json.dumps(report))
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
