#!/usr/bin/env python3
"""Writes the seed corpus of each parser fuzzer (Fuzz/Corpus/<target>/) from the committed fixtures:
playlists, init sections and segments as they are, and the avcC, hvcC and esds payloads, SPS NAL
units and AudioSpecificConfigs found inside the init sections, and the SPS the unit tests quote; and
for the parsers of what comes from the network, real requests, credentials, object stores' error
bodies and a recording written by the built hlscap (the RTMP capture is committed as it was made). Seeds are named by their SHA-1, as
libFuzzer names what it adds, so running this again only adds files.
"""
import glob
import hashlib
import hmac
import os
import re
import struct
import subprocess
import sys
import tempfile
import urllib.parse

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "Fuzz", "Corpus")
CONTAINERS = {b"moov", b"trak", b"mdia", b"minf", b"stbl", b"mvex", b"moof", b"traf", b"edts", b"dinf"}
CHILD_OFFSETS = {b"stsd": 8, b"avc1": 78, b"avc3": 78, b"hvc1": 78, b"hev1": 78, b"mp4a": 28}


def boxes(data, start=0, end=None):
    end = len(data) if end is None else end
    position = start
    while position + 8 <= end:
        size, kind = struct.unpack(">I4s", data[position:position + 8])
        if size < 8 or position + size > end:
            return
        yield kind, data[position + 8:position + size]
        payload_start = position + 8
        if kind in CONTAINERS:
            yield from boxes(data, payload_start, position + size)
        elif kind in CHILD_OFFSETS:
            yield from boxes(data, payload_start + CHILD_OFFSETS[kind], position + size)
        position += size


def esds_audio_config(payload):
    """The DecoderSpecificInfo (tag 5) of an esds payload."""
    position = 4  # version and flags
    while position < len(payload):
        tag = payload[position]
        position += 1
        length = 0
        for _ in range(4):
            byte = payload[position]
            position += 1
            length = length << 7 | byte & 0x7F
            if not byte & 0x80:
                break
        if tag == 3:
            position += 3  # ES_ID, flags
            continue
        if tag == 4:
            position += 13  # objectType, streamType, bufferSize, bitrates
            continue
        if tag == 5:
            return payload[position:position + length]
        position += length
    return None


def avcc_units(record):
    count = record[5] & 0x1F
    position, units = 6, []
    for _ in range(count):
        length = struct.unpack(">H", record[position:position + 2])[0]
        units.append(record[position + 2:position + 2 + length])
        position += 2 + length
    pps_count = record[position]
    position += 1
    for _ in range(pps_count):
        length = struct.unpack(">H", record[position:position + 2])[0]
        units.append(record[position + 2:position + 2 + length])
        position += 2 + length
    return units


def hvcc_units(record):
    position, units = 23, []
    for _ in range(record[22]):
        count = struct.unpack(">H", record[position + 1:position + 3])[0]
        position += 3
        for _ in range(count):
            length = struct.unpack(">H", record[position:position + 2])[0]
            units.append(record[position + 2:position + 2 + length])
            position += 2 + length
    return units


def adts_frame(audio_config, payload_size=16):
    """An ADTS frame carrying `audio_config`'s profile, rate and channels, with a zero payload."""
    object_type = audio_config[0] >> 3
    frequency_index = (audio_config[0] & 0x07) << 1 | audio_config[1] >> 7
    channels = (audio_config[1] >> 3) & 0x0F
    length = 7 + payload_size
    header = bytes([
        0xFF, 0xF1,
        (object_type - 1) << 6 | frequency_index << 2 | channels >> 2,
        (channels & 3) << 6 | length >> 11,
        (length >> 3) & 0xFF,
        (length & 7) << 5 | 0x1F,
        0xFC,
    ])
    return header + bytes(payload_size)


# What reaches the built-in server: request lines and headers as players and curl send them.
HTTP_REQUESTS = [
    "GET /playlist.m3u8 HTTP/1.1\r\nHost: camera.local:8080\r\nAccept-Encoding: gzip, deflate\r\n"
    "User-Agent: Mozilla/5.0 (X11; Linux x86_64) Chrome/120.0\r\n\r\n",
    "GET /seg/000001.m4s HTTP/1.1\r\nHost: camera.local:8080\r\nRange: bytes=0-1023\r\n\r\n",
    "GET /seg/000001.m4s HTTP/1.1\r\nHost: camera.local:8080\r\nRange: bytes=-500\r\n\r\n",
    "GET /init.mp4 HTTP/1.1\r\nHost: camera.local:8080\r\nRange: bytes=100-\r\n"
    "If-None-Match: \"5f3a-258\"\r\n\r\n",
    "GET /init.mp4 HTTP/1.1\r\nHost: camera.local:8080\r\nIf-Modified-Since: Sun, 06 Nov 1994 08:49:37 GMT\r\n\r\n",
    "GET /playlist.m3u8?_HLS_msn=42&_HLS_part=3&_HLS_skip=YES HTTP/1.1\r\nHost: camera.local:8080\r\n\r\n",
    "GET /720p/playlist.m3u8?token=viewer-token HTTP/1.1\r\nHost: camera.local:8080\r\n\r\n",
    "GET /recordings/playlist.m3u8?start=2026-12-01T10%3A02%3A00Z&duration=30 HTTP/1.1\r\nHost: camera.local\r\n\r\n",
    "GET /recordings/playlist.m3u8?start=2026-12-01T10:02:00.250Z&end=2026-12-01T10:15:00Z HTTP/1.1\r\n\r\n",
    "GET /recordings/index.json HTTP/1.1\r\nHost: camera.local\r\n\r\n",
    "GET /recordings/files/2026-12-01/10-00-00.mp4 HTTP/1.1\r\nRange: bytes=1103-40000\r\n\r\n",
    "GET /keys/0123abcd-1.key HTTP/1.1\r\nAuthorization: Bearer viewer-token\r\n\r\n",
    "HEAD /playlist.m3u8 HTTP/1.1\r\nHost: camera.local:8080\r\n\r\n",
    "OPTIONS /seg/000001.m4s HTTP/1.1\r\nOrigin: https://example.com\r\nAccess-Control-Request-Headers: range\r\n\r\n",
    "GET /../../etc/passwd HTTP/1.1\r\n\r\n",
    "GET /metrics HTTP/1.1\r\n\r\n",
]

# Credentials: a path, a query string and an Authorization header, one a line (fuzz-access-control's
# server has the token "viewer-token" and this signing key).
SIGNING_KEY = b"0123456789abcdef0123456789abcdef"
ACCESS_EXPIRES = 1767229200


def signed_query(prefix):
    signature = hmac.new(SIGNING_KEY, f"{prefix}\n{ACCESS_EXPIRES}".encode(), hashlib.sha256).hexdigest()
    return f"prefix={urllib.parse.quote(prefix, safe='')}&expires={ACCESS_EXPIRES}&signature={signature}"


def access_requests():
    return [
        "/playlist.m3u8\ntoken=viewer-token\n",
        "/seg/000001.m4s\n\nBearer viewer-token",
        "/seg/000001.m4s\n\nbearer wrong-token",
        "/live/playlist.m3u8\n" + signed_query("/live/").replace("%2F", "/") + "\n",
        "/live/seg/000002.m4s\nprefix=/live/&expires=1767225599&signature=00ff\n",
        "/metrics\n\nBasic dXNlcjpwYXNz",
    ]


# Object stores' error bodies as they send them: RADOS Gateway (Ceph), AWS S3, MinIO; and the answer
# to a multipart upload's start.
S3_BODIES = [
    '<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchBucket</Code><BucketName>hlscap</BucketName>'
    "<RequestId>tx000003a8f2c11e0b4b0ad-006571e5c2-1f4a-default</RequestId>"
    "<HostId>1f4a-default-default</HostId></Error>",
    '<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><BucketName>hlscap</BucketName>'
    "<RequestId>tx00000b2e4f71a3c6d9e18-006571e5d0-1f4a-default</RequestId>"
    "<HostId>1f4a-default-default</HostId></Error>",
    '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SignatureDoesNotMatch</Code><Message>The request '
    "signature we calculated does not match the signature you provided.</Message><RequestId>4442587FB7D0A2F9"
    "</RequestId><HostId>eftixk72aD6Ap51TnqcoF8eFidJG9Z/2mkiDFu8yU9AS1ed4OpIszj7UDNEHGran</HostId></Error>",
    '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code><Message>Resource requested is unreadable, '
    "please reduce your request rate</Message><Key>live/seg/000001.m4s</Key><BucketName>hlscap</BucketName>"
    "<Resource>/hlscap/live/seg/000001.m4s</Resource><RequestId>17A3C1F2E4B5D6A7</RequestId></Error>",
    '<?xml version="1.0" encoding="UTF-8"?><InitiateMultipartUploadResult xmlns="http://s3.amazonaws.com/doc/'
    '2006-03-01/"><Bucket>hlscap</Bucket><Key>rec/2026-12-01/10-00-00.mp4</Key><UploadId>2~iCw_lDY8VoRJ3E4o1'
    "XqCzcd1ihnIRz1</UploadId></InitiateMultipartUploadResult>",
]


def trimmed_recording(data, media_bytes=16):
    """A recording file's boxes with each mdat cut to a few bytes: the reader skips media data by its size."""
    out, position = bytearray(), 0
    while position + 8 <= len(data):
        size, kind = struct.unpack(">I4s", data[position:position + 8])
        box = data[position:position + size]
        if kind == b"mdat":
            box = struct.pack(">I4s", 8 + media_bytes, b"mdat") + box[8:8 + media_bytes]
        out += box
        position += size
    return bytes(out)


def write(target, data):
    directory = os.path.join(CORPUS, target)
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, hashlib.sha1(data).hexdigest()), "wb") as seed:
        seed.write(data)


def main():
    os.chdir(ROOT)
    for path in sorted(glob.glob("Fixtures/**/*.m3u8", recursive=True)):
        with open(path, "rb") as playlist:
            write("fuzz-playlist", playlist.read())
    for path in sorted(glob.glob("Fixtures/golden/*/init.mp4")):
        with open(path, "rb") as init:
            data = init.read()
        write("fuzz-mp4-box", data)
        for kind, payload in boxes(data):
            if kind == b"avcC":
                write("fuzz-avcc", payload)
                units = avcc_units(payload)
                write("fuzz-avcc", b"".join(b"\0\0\0\1" + unit for unit in units))
                for unit in units:
                    if unit[0] & 0x1F == 7:
                        write("fuzz-h264-sps", unit)
            elif kind == b"hvcC":
                write("fuzz-hvcc", payload)
                units = hvcc_units(payload)
                write("fuzz-hvcc", b"".join(b"\0\0\0\1" + unit for unit in units))
                for unit in units:
                    if (unit[0] >> 1) & 0x3F == 33:
                        write("fuzz-hevc-sps", unit)
            elif kind == b"esds":
                audio_config = esds_audio_config(payload)
                if audio_config:
                    write("fuzz-audio-config", audio_config)
                    write("fuzz-audio-config", adts_frame(audio_config))
    # The SPS NAL units the unit tests quote: profiles, scaling lists and formats the fixtures lack.
    for test, target, nal_type in [("BitstreamSPSTests.swift", "fuzz-h264-sps", "67"),
                                   ("BitstreamHEVCTests.swift", "fuzz-hevc-sps", "42")]:
        with open(os.path.join("Tests/HLSKitTests", test)) as source:
            for unit in re.findall(r'hex: "(%s[0-9a-f]*)"' % nal_type, source.read()):
                write(target, bytes.fromhex(unit))
    # The segment fuzzer's input: the init section's length, the init section, then one segment.
    for directory in ["Fixtures/validate/base", "Fixtures/golden/audio-only-m4a", "Fixtures/golden/hevc-pq-mp4"]:
        with open(os.path.join(directory, "init.mp4"), "rb") as init:
            data = init.read()
        with open(sorted(glob.glob(os.path.join(directory, "seg", "*.m4s")))[0], "rb") as segment:
            media = segment.read()
        write("fuzz-mp4-box", media)
        write("fuzz-segment", struct.pack(">H", len(data)) + data + media)
    for request in HTTP_REQUESTS:
        write("fuzz-http-request", request.encode())
    for request in access_requests():
        write("fuzz-access-control", request.encode())
    for body in S3_BODIES:
        write("fuzz-s3-error", body.encode())
    # A recording as `hlscap live --record` writes it, media data cut short: 96x64 test pattern, 4 s.
    hlscap = os.path.join(ROOT, ".build", "debug", "hlscap")
    if os.path.exists(hlscap):
        with tempfile.TemporaryDirectory() as directory:
            subprocess.run([hlscap, "live", "--video", "test", "--audio", "test", "--size", "96x64",
                            "--duration", "4", "--no-realtime", "--segment-duration", "1", "--record-codec", "h264",
                            "--record", os.path.join(directory, "rec.mp4"), "--out", os.path.join(directory, "out"),
                            "--quiet"], check=True, stdout=subprocess.DEVNULL)
            with open(os.path.join(directory, "rec.mp4"), "rb") as recording:
                write("fuzz-recording-summary", trimmed_recording(recording.read()))
    # fuzz-rtmp-publish holds what FFmpeg's RTMP client sent, from its handshake to its first video
    # packets, to `ffmpeg -listen 1 -i rtmp://127.0.0.1:PORT/live/secret-key` through a recording proxy
    # (`ffmpeg -re -f lavfi -i testsrc=size=64x48:rate=10 -t 1 -c:v libx264 -f flv rtmp://…/live/secret-key`):
    # C1 carries a time and random bytes, so it is committed as captured rather than made here.
    return 0


if __name__ == "__main__":
    sys.exit(main())
