#!/usr/bin/env python3
"""Stamps one PES packet of an MPEG-TS file with another time, as a damaged PES header would.

Usage: ts_restamp.py INPUT.ts OUTPUT.ts --stream video|audio --index N --seconds S [--keep-dts]

The N-th PES packet (from 0) of the first video (stream_id 0xE0-0xEF) or audio (0xC0-0xDF)
elementary stream gets PTS = S seconds on the 90 kHz clock, and its DTS, when present, the same
shift (with --keep-dts, only the PTS changes: a damaged composition time). Nothing else changes:
the file keeps its size and every other byte.
"""
import argparse
import sys

PACKET_SIZE = 188
CLOCK = 90_000


def read_timestamp(data, offset):
    return (((data[offset] >> 1) & 0x07) << 30 | data[offset + 1] << 22 | (data[offset + 2] >> 1) << 15
            | data[offset + 3] << 7 | data[offset + 4] >> 1)


def write_timestamp(data, offset, value):
    prefix = data[offset] & 0xF0
    data[offset] = prefix | ((value >> 29) & 0x0E) | 1
    data[offset + 1] = (value >> 22) & 0xFF
    data[offset + 2] = ((value >> 14) & 0xFE) | 1
    data[offset + 3] = (value >> 7) & 0xFF
    data[offset + 4] = ((value << 1) & 0xFE) | 1


def restamp(data, kind, index, seconds, keep_dts=False):
    """Returns (old PTS, new PTS) in 90 kHz ticks after changing `data` in place."""
    wanted = range(0xE0, 0xF0) if kind == "video" else range(0xC0, 0xE0)
    seen = 0
    for start in range(0, len(data) - PACKET_SIZE + 1, PACKET_SIZE):
        packet = data[start:start + PACKET_SIZE]
        if packet[0] != 0x47 or not packet[1] & 0x40:
            continue
        payload = 4
        if packet[3] & 0x20:
            payload += 1 + packet[4]
        pes = start + payload
        if data[pes:pes + 3] != b"\x00\x00\x01" or data[pes + 3] not in wanted:
            continue
        if seen < index:
            seen += 1
            continue
        flags = data[pes + 7] >> 6
        if not flags & 0x2:
            sys.exit("that PES packet has no PTS")
        old = read_timestamp(data, pes + 9)
        new = round(seconds * CLOCK)
        write_timestamp(data, pes + 9, new)
        if flags == 0x3 and not keep_dts:
            dts = read_timestamp(data, pes + 14)
            write_timestamp(data, pes + 14, dts + new - old)
        return old, new
    sys.exit(f"no {kind} PES packet number {index}")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("input")
    parser.add_argument("output")
    parser.add_argument("--stream", choices=["video", "audio"], required=True)
    parser.add_argument("--index", type=int, required=True)
    parser.add_argument("--seconds", type=float, required=True)
    parser.add_argument("--keep-dts", action="store_true", help="change only the PTS")
    args = parser.parse_args(argv)
    with open(args.input, "rb") as file:
        data = bytearray(file.read())
    old, new = restamp(data, args.stream, args.index, args.seconds, args.keep_dts)
    with open(args.output, "wb") as file:
        file.write(data)
    print(f"PTS {old / CLOCK:.3f} s -> {new / CLOCK:.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
