#!/usr/bin/env python3
"""Rewrites fields of the SPS NAL units of an Annex-B H.264 elementary stream, to make inputs that
declare impossible pictures, SPSs a decoder refuses, or a stream where one SPS alone is damaged.

Usage: h264_sps_edit.py INPUT.h264 OUTPUT.h264 [--size WxH] [--sps-id N] [--aspect-ratio-idc N]
                        [--first-only | --only N]

--size: width and height must be multiples of 16 (the cropping window is removed). --sps-id writes
seq_parameter_set_id (a decoder takes 0 to 31); --aspect-ratio-idc writes the VUI's aspect_ratio_idc
(17 to 254 are reserved), adding a VUI when there is none. --only N edits the Nth SPS alone (from 1).
Profiles with chroma_format_idc are read, but not scaling matrices. Emulation prevention is undone
before the edit and redone after it; every other field and the rest of the VUI are kept bit for bit.
"""
import argparse
import re
import sys

PROFILES_WITH_CHROMA_FORMAT = {100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135}
START_CODE = re.compile(b"\x00\x00\x01")


class BitReader:
    def __init__(self, data):
        self.data, self.position = data, 0

    def bit(self):
        byte = self.data[self.position // 8]
        value = (byte >> (7 - self.position % 8)) & 1
        self.position += 1
        return value

    def bits(self, count):
        value = 0
        for _ in range(count):
            value = value << 1 | self.bit()
        return value

    def ue(self):
        zeros = 0
        while self.bit() == 0:
            zeros += 1
        return (1 << zeros) - 1 + self.bits(zeros)


class BitWriter:
    def __init__(self):
        self.bits_written = []

    def bits(self, value, count):
        self.bits_written += [(value >> (count - 1 - index)) & 1 for index in range(count)]

    def ue(self, value):
        code = value + 1
        length = code.bit_length()
        self.bits(0, length - 1)
        self.bits(code, length)

    def copy(self, reader, count):
        for _ in range(count):
            self.bits_written.append(reader.bit())

    def bytes(self):
        padded = self.bits_written + [0] * (-len(self.bits_written) % 8)
        return bytes(int("".join(map(str, padded[index:index + 8])), 2) for index in range(0, len(padded), 8))


def unescape(payload):
    return payload.replace(b"\x00\x00\x03", b"\x00\x00")


def escape(payload):
    out, zeros = bytearray(), 0
    for byte in payload:
        if zeros >= 2 and byte <= 3:
            out.append(3)
            zeros = 0
        out.append(byte)
        zeros = zeros + 1 if byte == 0 else 0
    return bytes(out)


def rewrite_sps(nal, width=None, height=None, sps_id=None, aspect_ratio_idc=None):
    """The SPS NAL unit (header byte first) with the given fields; a new size drops the cropping."""
    reader, writer = BitReader(unescape(nal[1:])), BitWriter()
    profile = reader.bits(8)
    writer.bits(profile, 8)
    writer.copy(reader, 16)  # constraint flags, level
    original_id = reader.ue()
    writer.ue(original_id if sps_id is None else sps_id)
    if profile in PROFILES_WITH_CHROMA_FORMAT:
        chroma_format = reader.ue()
        writer.ue(chroma_format)
        if chroma_format == 3:
            writer.copy(reader, 1)
        writer.ue(reader.ue())
        writer.ue(reader.ue())
        writer.copy(reader, 1)
        if reader.bit():
            sys.exit("scaling matrices are not supported")
        writer.bits(0, 1)
    writer.ue(reader.ue())  # log2_max_frame_num_minus4
    poc_type = reader.ue()
    writer.ue(poc_type)
    if poc_type == 0:
        writer.ue(reader.ue())
    elif poc_type == 1:
        writer.copy(reader, 1)
        for _ in range(2):
            value = reader.ue()  # se(v) has the same code length as ue(v)
            writer.ue(value)
        cycle = reader.ue()
        writer.ue(cycle)
        for _ in range(cycle):
            writer.ue(reader.ue())
    writer.ue(reader.ue())  # max_num_ref_frames
    writer.copy(reader, 1)
    width_in_macroblocks, height_in_map_units = reader.ue(), reader.ue()
    frame_mbs_only = reader.bit()
    if width is None:
        writer.ue(width_in_macroblocks)
        writer.ue(height_in_map_units)
    else:
        writer.ue(width // 16 - 1)
        writer.ue(height // (16 if frame_mbs_only else 32) - 1)
    writer.bits(frame_mbs_only, 1)
    if not frame_mbs_only:
        writer.copy(reader, 1)
    writer.copy(reader, 1)  # direct_8x8_inference_flag
    cropping = [reader.ue() for _ in range(4)] if reader.bit() else None
    if cropping is None or width is not None:
        writer.bits(0, 1)  # no cropping
    else:
        writer.bits(1, 1)
        for value in cropping:
            writer.ue(value)
    if aspect_ratio_idc is not None:
        if reader.bit():  # vui_parameters_present_flag
            writer.bits(1, 1)
            if reader.bit():  # aspect_ratio_info_present_flag: the old ratio goes
                if reader.bits(8) == 255:
                    reader.bits(32)
            writer.bits(1, 1)
            writer.bits(aspect_ratio_idc, 8)
        else:
            # A VUI of the ratio alone: the eight presence flags after it are all 0.
            writer.bits(1, 1)
            writer.bits(1, 1)
            writer.bits(aspect_ratio_idc, 8)
            writer.bits(0, 8)
            writer.bits(1, 1)  # rbsp_stop_one_bit
            return nal[:1] + escape(writer.bytes())
    rest = len(reader.data) * 8 - reader.position
    writer.copy(reader, rest)  # the VUI and the trailing bits, as they were
    while writer.bits_written and writer.bits_written[-1] == 0:
        writer.bits_written.pop()
    return nal[:1] + escape(writer.bytes())


def edit(stream, width=None, height=None, first_only=False, sps_id=None, aspect_ratio_idc=None, only=None):
    """The stream with its SPSs edited (only the Nth, from 1, when `only`; the first when `first_only`)."""
    if first_only:
        only = 1
    starts = [match.end() for match in START_CODE.finditer(stream)]
    out, previous_end, seen, edited = bytearray(), 0, 0, 0
    for index, start in enumerate(starts):
        end = starts[index + 1] - 3 if index + 1 < len(starts) else len(stream)
        nal = stream[start:end]
        trailing_zeros = len(nal) - len(nal.rstrip(b"\x00")) if index + 1 < len(starts) else 0
        body = nal[:len(nal) - trailing_zeros]
        out += stream[previous_end:start]
        if body and body[0] & 0x1F == 7:
            seen += 1
            if only is None or seen == only:
                body = rewrite_sps(body, width, height, sps_id, aspect_ratio_idc)
                edited += 1
        out += body + b"\x00" * trailing_zeros
        previous_end = end
    return bytes(out), edited


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("input")
    parser.add_argument("output")
    parser.add_argument("--size")
    parser.add_argument("--sps-id", type=int)
    parser.add_argument("--aspect-ratio-idc", type=int)
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--first-only", action="store_true")
    which.add_argument("--only", type=int)
    args = parser.parse_args(argv)
    width = height = None
    if args.size:
        width, height = (int(part) for part in args.size.split("x"))
        if width % 16 or height % 16:
            sys.exit("the size must be made of whole macroblocks")
    if args.size is None and args.sps_id is None and args.aspect_ratio_idc is None:
        sys.exit("give --size, --sps-id or --aspect-ratio-idc")
    with open(args.input, "rb") as file:
        stream = file.read()
    edited_stream, count = edit(stream, width, height, args.first_only, args.sps_id, args.aspect_ratio_idc,
                                args.only)
    with open(args.output, "wb") as file:
        file.write(edited_stream)
    print(f"rewrote {count} SPS")
    return 0 if count else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
