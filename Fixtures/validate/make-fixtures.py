#!/usr/bin/env python3
"""Regenerates Fixtures/validate/: a small valid stream (base/) and, per rule, a directory whose
playlist or media breaks that rule alone. The committed files are the truth: tests read them and
never run this script. Needs ffmpeg and a built hlscap (HLSCAP_BIN, default .build/debug/hlscap).

    Fixtures/validate/make-fixtures.py
"""
import os
import shutil
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
HLSCAP = os.environ.get("HLSCAP_BIN", os.path.join(ROOT, ".build/debug/hlscap"))
CONTAINERS = {b"moov", b"trak", b"mdia", b"minf", b"stbl", b"mvex", b"moof", b"traf", b"dinf", b"edts"}


def boxes(data, start=0, end=None):
    """(type, offset, size, payload offset) of each box in data[start:end], depth first."""
    end = len(data) if end is None else end
    position = start
    while position < end:
        size, kind = struct.unpack(">I4s", data[position:position + 8])
        yield kind, position, size, position + 8
        if kind in CONTAINERS:
            yield from boxes(data, position + 8, position + size)
        elif kind == b"stsd":
            yield from boxes(data, position + 16, position + size)
        elif kind in (b"avc1", b"mp4a"):
            yield from boxes(data, position + 8 + (78 if kind == b"avc1" else 28), position + size)
        position += size


def find(data, kind):
    return [b for b in boxes(data) if b[0] == kind]


def video_track_id(init):
    """The track ID of the track whose handler is 'vide'."""
    track_ids = []
    for _, p, _, _ in find(init, b"tkhd"):
        at = p + (28 if init[p + 8] == 1 else 20)  # after the creation and modification times
        track_ids.append(struct.unpack(">I", init[at:at + 4])[0])
    handlers = [init[p + 16:p + 20] for _, p, _, _ in find(init, b"hdlr")]
    return track_ids[handlers.index(b"vide")]


def trafs(segment):
    """(track ID, tfdt payload offset, trun offset) for each traf; tfdt is version 1."""
    result = []
    for kind, offset, size, _ in boxes(segment):
        if kind != b"traf":
            continue
        inner = [b for b in boxes(segment, offset + 8, offset + size)]
        tfhd = next(b for b in inner if b[0] == b"tfhd")
        tfdt = next(b for b in inner if b[0] == b"tfdt")
        trun = next(b for b in inner if b[0] == b"trun")
        track_id = struct.unpack(">I", segment[tfhd[1] + 12:tfhd[1] + 16])[0]
        result.append((track_id, tfdt[1], trun[1]))
    return result


def shift_decode_times(segment, ticks_by_track):
    """A copy of segment whose tfdt of each track is later by ticks_by_track[track]."""
    data = bytearray(segment)
    for track_id, tfdt, _ in trafs(segment):
        value = struct.unpack(">Q", data[tfdt + 12:tfdt + 20])[0]
        data[tfdt + 12:tfdt + 20] = struct.pack(">Q", value + ticks_by_track[track_id])
    return bytes(data)


def segment_ticks(segment, init):
    """Each track's total sample duration in a segment, from its trun (duration present)."""
    totals = {}
    for track_id, _, trun in trafs(segment):
        flags = struct.unpack(">I", segment[trun + 8:trun + 12])[0] & 0xFFFFFF
        count = struct.unpack(">I", segment[trun + 12:trun + 16])[0]
        position = trun + 16 + (4 if flags & 1 else 0) + (4 if flags & 4 else 0)
        fields = [bit for bit in (0x100, 0x200, 0x400, 0x800) if flags & bit]
        total = 0
        for _ in range(count):
            total += struct.unpack(">I", segment[position:position + 4])[0]
            position += 4 * len(fields)
        totals[track_id] = total
    return totals


def mark_first_video_sample_non_sync(segment, video_track):
    data = bytearray(segment)
    for track_id, _, trun in trafs(segment):
        if track_id != video_track:
            continue
        flags = struct.unpack(">I", data[trun + 8:trun + 12])[0] & 0xFFFFFF
        position = trun + 16 + (4 if flags & 1 else 0)
        if flags & 4:
            flag_position = position
        else:
            assert flags & 0x400, "trun has no sample flags"
            flag_position = position + (4 if flags & 0x100 else 0) + (4 if flags & 0x200 else 0)
        value = struct.unpack(">I", data[flag_position:flag_position + 4])[0]
        data[flag_position:flag_position + 4] = struct.pack(">I", (value | 0x10000) & ~0x3000000 | 0x1000000)
    return bytes(data)


def retype_first_video_nal(segment, video_track, nal_type):
    """A copy of segment whose first video sample's first NAL unit has another type (H.264's low 5 bits)."""
    data = bytearray(segment)
    moof = find(segment, b"moof")[0]
    for track_id, _, trun in trafs(segment):
        if track_id != video_track:
            continue
        data_offset = struct.unpack(">i", data[trun + 16:trun + 20])[0]
        header = moof[1] + data_offset + 4  # past the NAL unit's 4-byte length
        data[header] = data[header] & 0xE0 | nal_type
    return bytes(data)


def reserve_aspect_ratio_idc(init):
    """A copy of init whose avcC SPS says aspect_ratio_idc 100 (17 to 254 are reserved) instead of 1, the
    byte after the VUI's aspect_ratio_info_present_flag (its 8th) in the base stream's SPS."""
    sps = bytes.fromhex("6742c00ada189b011000000300100000030140f1226a")
    assert init.count(sps) == 1, "the base stream's SPS changed: find its aspect_ratio_idc again"
    return init.replace(sps, sps[:7] + bytes([100]) + sps[8:])


def write(directory, name, content):
    path = os.path.join(HERE, directory, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb" if isinstance(content, bytes) else "w") as file:
        file.write(content)


def media_playlist(segments, header=None, version=6, target=1, sequence=1, kind="VOD", map_uri="../base/init.mp4",
                   independent=True, end=True, durations=None, extra_segment_lines=None, defines=()):
    """A media playlist text; header lines replace the default header when given."""
    lines = ["#EXTM3U"]
    if header is None:
        header = [f"#EXT-X-VERSION:{version}", *defines, f"#EXT-X-TARGETDURATION:{target}",
                  f"#EXT-X-MEDIA-SEQUENCE:{sequence}"]
        if kind:
            header.append(f"#EXT-X-PLAYLIST-TYPE:{kind}")
        if independent:
            header.append("#EXT-X-INDEPENDENT-SEGMENTS")
        if map_uri:
            header.append(f'#EXT-X-MAP:URI="{map_uri}"')
    lines += header
    for index, uri in enumerate(segments):
        lines += (extra_segment_lines or {}).get(index, [])
        duration = (durations or {}).get(index, "1.000")
        lines += [f"#EXTINF:{duration},", uri]
    if end:
        lines.append("#EXT-X-ENDLIST")
    return "\n".join(lines) + "\n"


BASE_SEGMENTS = ["../base/seg/000001.m4s", "../base/seg/000002.m4s", "../base/seg/000003.m4s"]


def make_base():
    base = os.path.join(HERE, "base")
    shutil.rmtree(base, ignore_errors=True)
    source = os.path.join(HERE, "tiny.mp4")
    subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-y",
                    "-f", "lavfi", "-i", "testsrc2=size=96x64:rate=10",
                    "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000", "-t", "3",
                    "-c:v", "libx264", "-threads", "1", "-preset", "veryfast", "-pix_fmt", "yuv420p",
                    "-profile:v", "baseline", "-bf", "0", "-g", "10", "-keyint_min", "10", "-sc_threshold", "0",
                    "-b:v", "20k", "-c:a", "aac", "-ac", "2", "-b:a", "24k",
                    "-fflags", "+bitexact", "-flags:v", "+bitexact", "-flags:a", "+bitexact", "-map_metadata", "-1",
                    source], check=True)
    subprocess.run([HLSCAP, "file", source, "--copy", "--segment-duration", "1", "--out", base, "--quiet"],
                   check=True, stdout=subprocess.DEVNULL)
    os.remove(source)
    master = open(os.path.join(base, "master.m3u8")).read()
    if "#EXT-X-I-FRAME-STREAM-INF" in master:
        return master  # hlscap wrote the I-frame playlist itself
    # An I-frame playlist: each range is the moof, the mdat header and the segment's first picture.
    init = open(os.path.join(base, "init.mp4"), "rb").read()
    video = video_track_id(init)
    lines = ["#EXTM3U", "#EXT-X-VERSION:6", "#EXT-X-TARGETDURATION:1", "#EXT-X-MEDIA-SEQUENCE:1",
             "#EXT-X-PLAYLIST-TYPE:VOD", "#EXT-X-I-FRAMES-ONLY", '#EXT-X-MAP:URI="init.mp4"']
    for index in range(1, 4):
        name = f"seg/{index:06d}.m4s"
        segment = open(os.path.join(base, name), "rb").read()
        moof = find(segment, b"moof")[0]
        track_id, _, trun = next(t for t in trafs(segment) if t[0] == video)
        flags = struct.unpack(">I", segment[trun + 8:trun + 12])[0] & 0xFFFFFF
        data_offset = struct.unpack(">i", segment[trun + 16:trun + 20])[0]
        first_size_position = trun + 20 + (4 if flags & 4 else 0) + (4 if flags & 0x100 else 0)
        first_size = struct.unpack(">I", segment[first_size_position:first_size_position + 4])[0]
        length = moof[1] + data_offset + first_size - moof[1]
        lines += [f"#EXTINF:1.000,", f"#EXT-X-BYTERANGE:{length}@{moof[1]}", name]
    lines.append("#EXT-X-ENDLIST")
    write("base", "iframes.m3u8", "\n".join(lines) + "\n")
    stream_inf = next(line for line in master.splitlines() if line.startswith("#EXT-X-STREAM-INF:"))
    attributes = dict(part.split("=", 1) for part in stream_inf.split(":", 1)[1].split(",") if "=" in part
                      and not part.startswith("mp4a"))
    iframe = (f'#EXT-X-I-FRAME-STREAM-INF:BANDWIDTH={int(attributes["BANDWIDTH"]) // 4},'
              f'CODECS="{attributes["CODECS"].strip(chr(34))}",RESOLUTION={attributes["RESOLUTION"]},URI="iframes.m3u8"')
    write("base", "master.m3u8", master + iframe + "\n")
    return master


def main():
    for entry in os.listdir(HERE):
        if os.path.isdir(os.path.join(HERE, entry)):
            shutil.rmtree(os.path.join(HERE, entry))
    base_master = make_base()
    init = open(os.path.join(HERE, "base/init.mp4"), "rb").read()
    video = video_track_id(init)
    segments = [open(os.path.join(HERE, f"base/seg/{i:06d}.m4s"), "rb").read() for i in (1, 2, 3)]
    stream_inf = next(line for line in base_master.splitlines() if line.startswith("#EXT-X-STREAM-INF:"))

    def master(inf=stream_inf, extra=(), iframe=True):
        lines = ["#EXTM3U", "#EXT-X-VERSION:6", "#EXT-X-INDEPENDENT-SEGMENTS", *extra, inf, "../base/playlist.m3u8"]
        if iframe:
            codecs = inf.split('CODECS="')[1].split('"')[0].split(",")[0]
            lines.append(f'#EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=15000,CODECS="{codecs}",RESOLUTION=96x64,'
                         'URI="../base/iframes.m3u8"')
        return "\n".join(lines) + "\n"

    # Three more segments that continue the first three in time: six for live windows.
    ticks = {track: sum(segment_ticks(s, init)[track] for s in segments) for track in segment_ticks(segments[0], init)}
    for index, segment in enumerate(segments):
        write("later", f"{index + 4:06d}.m4s", shift_decode_times(segment, ticks))
    six = BASE_SEGMENTS + [f"../later/{i:06d}.m4s" for i in (4, 5, 6)]
    dates = {i: [f"#EXT-X-PROGRAM-DATE-TIME:2026-01-01T00:00:{i:02d}.000Z"] for i in range(6)}

    # Playlists.
    write("header", "playlist.m3u8", media_playlist(BASE_SEGMENTS).replace("#EXTM3U\n", "", 1))
    write("syntax", "playlist.m3u8", media_playlist(BASE_SEGMENTS, extra_segment_lines={0: ["#EXT-X-START:TIME-OFFSET=soon"]}))
    write("playlist-kind", "master.m3u8", master(extra=["#EXT-X-TARGETDURATION:1"]))
    write("version", "playlist.m3u8", media_playlist(BASE_SEGMENTS, version=3))
    write("target-duration", "playlist.m3u8", media_playlist(BASE_SEGMENTS, durations={1: "1.000"}, target=0))
    write("media-sequence", "playlist.m3u8", media_playlist(BASE_SEGMENTS, extra_segment_lines={1: ["#EXT-X-MEDIA-SEQUENCE:2"]}))
    write("discontinuity-sequence", "playlist.m3u8",
          media_playlist(BASE_SEGMENTS, extra_segment_lines={1: ["#EXT-X-DISCONTINUITY-SEQUENCE:0"]}))
    write("map", "playlist.m3u8", media_playlist(BASE_SEGMENTS, map_uri=None))
    # An AES-128 key of 5 bytes before the second segment.
    write("key", "playlist.m3u8", media_playlist(
        BASE_SEGMENTS, extra_segment_lines={1: ['#EXT-X-KEY:METHOD=AES-128,URI="short.key"']}))
    write("key", "short.key", b"abcde")
    write("byterange", "playlist.m3u8", media_playlist(
        BASE_SEGMENTS, extra_segment_lines={0: [f"#EXT-X-BYTERANGE:{len(segments[0])}@0"],
                                            1: [f"#EXT-X-BYTERANGE:{len(segments[1])}"]}))
    write("playlist-type", "playlist.m3u8", media_playlist(BASE_SEGMENTS, kind="LIVE"))
    write("endlist", "playlist.m3u8", media_playlist(BASE_SEGMENTS) + "#EXT-X-ENDLIST\n")
    write("program-date-time", "playlist.m3u8", media_playlist(BASE_SEGMENTS, extra_segment_lines={
        0: ["#EXT-X-PROGRAM-DATE-TIME:2026-01-01T00:00:02.000Z"], 1: ["#EXT-X-PROGRAM-DATE-TIME:2026-01-01T00:00:00.000Z"]}))
    write("bandwidth", "master.m3u8", master(inf=stream_inf.replace("BANDWIDTH=", "X-PEAK=", 1)))
    write("variant-attributes", "master.m3u8", master(inf=stream_inf.replace("RESOLUTION=96x64", "RESOLUTION=96by64")))
    write("rendition-groups", "master.m3u8", master(inf=stream_inf + ',AUDIO="stereo"'))
    part = '#EXT-X-PART:DURATION=1.0,URI="../base/seg/000001.m4s"'
    write("part-inf", "playlist.m3u8", media_playlist(BASE_SEGMENTS, extra_segment_lines={0: [part]}))
    low_latency = ["#EXT-X-PART-INF:PART-TARGET=0.5", "#EXT-X-SERVER-CONTROL:PART-HOLD-BACK=1.5"]
    write("part-duration", "playlist.m3u8", media_playlist(BASE_SEGMENTS, extra_segment_lines={0: low_latency + [part]}))
    # gohlslib's hold-back: 2.5 part targets, enough for the RFC, under Apple's three.
    write("apple-part-hold-back", "playlist.m3u8", media_playlist(BASE_SEGMENTS, extra_segment_lines={0: [
        "#EXT-X-PART-INF:PART-TARGET=1.0", "#EXT-X-SERVER-CONTROL:PART-HOLD-BACK=2.5", part]}))
    write("server-control", "playlist.m3u8", media_playlist(
        BASE_SEGMENTS, extra_segment_lines={0: ["#EXT-X-SERVER-CONTROL:HOLD-BACK=1.0"]}))
    write("preload-hint", "playlist.m3u8", media_playlist(BASE_SEGMENTS) + "#EXT-X-PRELOAD-HINT:TYPE=PART\n")
    write("skip", "playlist.m3u8", media_playlist(BASE_SEGMENTS, version=9, extra_segment_lines={0: ["#EXT-X-SKIP:SKIPPED-SEGMENTS=0"]}))
    write("uri", "playlist.m3u8", media_playlist(BASE_SEGMENTS[:2] + ["../base/seg/000009.m4s"]))

    # Variables (EXT-X-DEFINE): the segment URIs are written {$seg}/000001.m4s … so that they
    # resolve only when substitution works.
    by_variable = [uri.replace("../base/seg", "{$seg}") for uri in BASE_SEGMENTS]
    define_seg = '#EXT-X-DEFINE:NAME="seg",VALUE="../base/seg"'
    write("define-name", "playlist.m3u8", media_playlist(
        BASE_SEGMENTS, version=8, defines=['#EXT-X-DEFINE:NAME="seg.dir",VALUE="../base/seg"']))
    write("define-duplicate", "playlist.m3u8", media_playlist(by_variable, version=8, defines=[define_seg, define_seg]))
    write("variable-undefined", "master.m3u8", master(
        extra=[define_seg, '#EXT-X-SESSION-DATA:DATA-ID="com.example.title",VALUE="{$title}"'])
          .replace("#EXT-X-VERSION:6", "#EXT-X-VERSION:8").replace("../base/playlist.m3u8", "playlist.m3u8"))
    write("variable-undefined", "playlist.m3u8", media_playlist(
        by_variable, version=8, defines=['#EXT-X-DEFINE:IMPORT="seg"']))

    # Media.
    no_mvex = init.replace(b"mvex", b"free", 1)
    write("init-section", "init.mp4", no_mvex)
    write("init-section", "playlist.m3u8", media_playlist(BASE_SEGMENTS, map_uri="init.mp4"))
    write("codecs", "master.m3u8", master(inf=stream_inf.replace("avc1.42c00a", "avc1.64001f")))
    moved = bytearray(segments[1])
    _, _, trun = trafs(segments[1])[0]
    offset = struct.unpack(">i", moved[trun + 16:trun + 20])[0]
    moved[trun + 16:trun + 20] = struct.pack(">i", offset + 100000)
    write("segment-boxes", "000002.m4s", bytes(moved))
    write("segment-boxes", "playlist.m3u8", media_playlist([BASE_SEGMENTS[0], "000002.m4s", BASE_SEGMENTS[2]]))
    late = shift_decode_times(segments[1], {track: 27000 if track == video else 0 for track in ticks})
    write("tfdt-continuity", "000002.m4s", late)
    write("tfdt-continuity", "playlist.m3u8", media_playlist([BASE_SEGMENTS[0], "000002.m4s", BASE_SEGMENTS[2]]))
    write("independent-segments", "000002.m4s", mark_first_video_sample_non_sync(segments[1], video))
    write("independent-segments", "playlist.m3u8", media_playlist([BASE_SEGMENTS[0], "000002.m4s", BASE_SEGMENTS[2]]))
    write("extinf-duration", "playlist.m3u8", media_playlist(BASE_SEGMENTS, durations={1: "1.300"}))
    # The second segment's first NAL unit read as a PPS: it names SPS 7, which the decoder never gets.
    # And the sample entry's SPS with a reserved aspect_ratio_idc, which FFmpeg drops ("illegal aspect ratio").
    write("parameter-sets", "000002.m4s", retype_first_video_nal(segments[1], video, 8))
    write("parameter-sets", "init.mp4", reserve_aspect_ratio_idc(open(os.path.join(HERE, "base", "init.mp4"), "rb").read()))
    write("parameter-sets", "playlist.m3u8", media_playlist([BASE_SEGMENTS[0], "000002.m4s", BASE_SEGMENTS[2]],
                                                            map_uri="init.mp4"))

    # Apple's authoring specification (warnings only).
    write("apple-iframe-playlists", "master.m3u8", master(iframe=False))
    write("apple-average-bandwidth", "master.m3u8", master(inf=",".join(
        part for part in stream_inf.split(",") if not part.startswith("AVERAGE-BANDWIDTH="))))
    write("apple-frame-rate", "master.m3u8", master(inf=stream_inf.split(",FRAME-RATE=")[0]))
    write("apple-measured-bandwidth", "master.m3u8", master(inf=stream_inf.replace(
        stream_inf.split("BANDWIDTH=")[1].split(",")[0], "20000", 1)))
    write("apple-program-date-time", "playlist.m3u8", media_playlist(six, kind=None, end=False))
    write("apple-live-window", "playlist.m3u8", media_playlist(BASE_SEGMENTS, kind=None, end=False, extra_segment_lines=dates))
    write("apple-discontinuity-sequence", "playlist.m3u8", media_playlist(
        BASE_SEGMENTS + BASE_SEGMENTS, extra_segment_lines={3: ["#EXT-X-DISCONTINUITY"]}))
    mono = bytearray(init)
    mp4a = find(init, b"mp4a")[0][1]
    mono[mp4a + 24:mp4a + 26] = struct.pack(">H", 1)
    write("apple-stereo-aac", "init.mp4", bytes(mono))
    write("apple-stereo-aac", "playlist.m3u8", media_playlist(BASE_SEGMENTS, map_uri="init.mp4"))
    write("apple-idr-interval", "000002.m4s", mark_first_video_sample_non_sync(segments[1], video))
    write("apple-idr-interval", "000003.m4s", mark_first_video_sample_non_sync(segments[2], video))
    write("apple-idr-interval", "playlist.m3u8", media_playlist(
        [BASE_SEGMENTS[0], "000002.m4s", "000003.m4s", "../later/000004.m4s"], independent=False))

    write_low_latency(six, dates, stream_inf)

    # Live: successive versions of one playlist, playlist.1.m3u8, playlist.2.m3u8 …
    def live(directory, versions):
        for index, text in enumerate(versions):
            write(directory, f"playlist.{index + 1}.m3u8", text)

    def window(first, **options):
        return media_playlist(six[first - 1:first + 2], sequence=first, **{"kind": None, "end": False, **options})
    live("live-media-sequence", [window(2), window(1)])
    live("live-target-duration", [window(1), window(2, target=2)])
    live("live-playlist-type", [window(1, kind="EVENT"), window(2, kind="EVENT")])
    live("live-stale", [window(1)])
    live("live-retention", [media_playlist(["gone.m4s"] + BASE_SEGMENTS[1:], kind=None, end=False), window(2)])
    control = ["#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,HOLD-BACK=3.0"]
    live("live-blocking-reload", [window(1, extra_segment_lines={0: control})])


def low_latency_playlist(segments, dates, control="CAN-BLOCK-RELOAD=YES,PART-HOLD-BACK=3.0,HOLD-BACK=3.0",
                         hint=True, reports=()):
    """A live Low-Latency playlist: the last segment also listed as a part, a preload hint, rendition reports."""
    header = ["#EXT-X-VERSION:6", "#EXT-X-TARGETDURATION:1", "#EXT-X-MEDIA-SEQUENCE:1", "#EXT-X-INDEPENDENT-SEGMENTS",
              '#EXT-X-MAP:URI="../base/init.mp4"', "#EXT-X-PART-INF:PART-TARGET=1.0", f"#EXT-X-SERVER-CONTROL:{control}"]
    lines = {**dates, len(segments) - 1: dates[len(segments) - 1] + [
        f'#EXT-X-PART:DURATION=1.0,URI="{segments[-1]}",INDEPENDENT=YES']}
    text = media_playlist(segments, header=header, end=False, extra_segment_lines=lines)
    if hint:
        text += '#EXT-X-PRELOAD-HINT:TYPE=PART,URI="next.m4s"\n'
    return text + "".join(f"#EXT-X-RENDITION-REPORT:{report}\n" for report in reports)


def write_low_latency(six, dates, stream_inf):
    """Apple's Low-Latency HLS rules (warnings), each broken alone by a live playlist with parts."""
    write("apple-ll-blocking-reload", "playlist.m3u8",
          low_latency_playlist(six, dates, control="PART-HOLD-BACK=3.0,HOLD-BACK=3.0"))
    write("apple-ll-preload-hint", "playlist.m3u8", low_latency_playlist(six, dates, hint=False))
    # Two renditions: a.m3u8 reports b.m3u8 whole; b.m3u8 reports a.m3u8 without LAST-PART.
    write("apple-ll-rendition-reports", "a.m3u8",
          low_latency_playlist(six, dates, reports=['URI="b.m3u8",LAST-MSN=6,LAST-PART=0']))
    write("apple-ll-rendition-reports", "b.m3u8", low_latency_playlist(six, dates, reports=['URI="a.m3u8",LAST-MSN=6']))
    iframe = ('#EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=15000,CODECS="avc1.42c00a",RESOLUTION=96x64,'
              'URI="../base/iframes.m3u8"')
    write("apple-ll-rendition-reports", "master.m3u8", "\n".join(
        ["#EXTM3U", "#EXT-X-VERSION:6", "#EXT-X-INDEPENDENT-SEGMENTS", stream_inf, "a.m3u8", stream_inf, "b.m3u8",
         iframe]) + "\n")


if __name__ == "__main__":
    sys.exit(main())
