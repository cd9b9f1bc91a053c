#!/usr/bin/env python3
"""Writes the seed corpus of each parser fuzzer (Fuzz/Corpus/<target>/) from the committed fixtures:
playlists, init sections and segments as they are, and the avcC, hvcC and esds payloads, SPS NAL
units and AudioSpecificConfigs found inside the init sections, and the SPS the unit tests quote. Seeds are named by their SHA-1, as
libFuzzer names what it adds, so running this again only adds files.
"""
import glob
import hashlib
import os
import re
import struct
import sys

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
    return 0


if __name__ == "__main__":
    sys.exit(main())
