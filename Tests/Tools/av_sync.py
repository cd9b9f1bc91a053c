#!/usr/bin/env python3
"""Measures A/V sync in a stream whose picture flashes white while a beep starts.

Decodes PATH (a file or an HLS playlist) with ffmpeg, finds the white frames (luma average) and
the beep onsets (first loud sample of a stretch of at least 30 ms after a quiet one), pairs each flash with the nearest
onset and prints one JSON line with the offsets (audio minus video, milliseconds).
Exit status: 0 when at least --min-pairs pairs were found and every |offset| <= --max-offset-ms,
1 otherwise, 2 when ffmpeg could not decode PATH.
"""
import argparse
import array
import json
import re
import subprocess
import sys

SAMPLE_RATE = 48000
WHITE_LUMA = 128          # a flash frame is white, the others black or a pattern well below
LOUD = 0.25 * 32767       # beep amplitude is 0.5 of full scale; pre-echo stays far below this
QUIET_SECONDS = 0.2       # an onset must follow this much quiet
BEEP_SECONDS = 0.03       # the fixture's beeps last 50 ms; one AAC frame is 21.3 ms


def run(arguments):
    result = subprocess.run(arguments, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600)
    if result.returncode != 0:
        sys.stderr.write(result.stderr.decode(errors="replace"))
        sys.exit(2)
    return result.stdout


def flash_times(path):
    output = run(["ffmpeg", "-nostdin", "-v", "error", "-copyts", "-i", path, "-map", "0:v:0",
                  "-vf", "signalstats,metadata=print:file=-", "-f", "null", "-"]).decode()
    times, current = [], None
    for line in output.splitlines():
        frame = re.search(r"pts_time:([-0-9.e]+)", line)
        if frame:
            current = float(frame.group(1))
        luma = re.match(r"lavfi\.signalstats\.YAVG=([0-9.]+)", line)
        if luma and current is not None and float(luma.group(1)) > WHITE_LUMA:
            times.append(current)
    return times


def first_audio_time(path):
    # Every frame rather than -read_intervals: interval seeking in the HLS demuxer sometimes yields none.
    output = run(["ffprobe", "-v", "error", "-select_streams", "a:0", "-show_entries", "frame=pts_time",
                  "-of", "csv=p=0", path]).decode()
    lines = [line.strip(",") for line in output.split() if line.strip(",")]
    if not lines:
        sys.stderr.write(f"{path}: no audio frames\n")
        sys.exit(2)
    return float(lines[0])


def beep_times(path):
    start = first_audio_time(path)
    raw = run(["ffmpeg", "-nostdin", "-v", "error", "-i", path, "-map", "0:a:0", "-ac", "1",
               "-ar", str(SAMPLE_RATE), "-f", "s16le", "-"])
    samples = array.array("h")
    samples.frombytes(raw[: len(raw) // 2 * 2])
    return [start + index / SAMPLE_RATE for index in onsets(samples)]


def onsets(samples):
    """Indexes of the first loud sample of each beep: a loud stretch of at least BEEP_SECONDS after
    QUIET_SECONDS without one. A shorter burst is not a beep: where copied AAC is joined, the frame at
    the join overlaps the sound just past the cut (the transform's overlap), up to one AAC frame of it."""
    bin_size = SAMPLE_RATE // 1000
    loud_bins = [max(map(abs, samples[start:start + bin_size]), default=0) >= LOUD
                 for start in range(0, len(samples), bin_size)]
    # Loud stretches, bins apart by less than a beep's own zero crossings joined: (first bin, last bin).
    stretches, first, last = [], None, None
    for index, loud in enumerate(loud_bins):
        if not loud:
            continue
        if first is not None and index - last > 2:
            stretches.append((first, last))
            first = None
        if first is None:
            first = index
        last = index
    if first is not None:
        stretches.append((first, last))
    found, previous_end = [], None
    for first, last in stretches:
        if (last - first + 1) * bin_size < BEEP_SECONDS * SAMPLE_RATE:
            continue
        if previous_end is None or (first - previous_end - 1) * bin_size >= QUIET_SECONDS * SAMPLE_RATE:
            if previous_end is not None or first * bin_size >= QUIET_SECONDS * SAMPLE_RATE:
                offset = first * bin_size
                found.append(offset + next(i for i, value in enumerate(samples[offset:offset + bin_size])
                                           if abs(value) >= LOUD))
        previous_end = last
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path")
    parser.add_argument("--max-offset-ms", type=float, default=10.0)
    parser.add_argument("--min-pairs", type=int, default=3)
    arguments = parser.parse_args()

    flashes = flash_times(arguments.path)
    beeps = beep_times(arguments.path)
    offsets = []
    for flash in flashes:
        if beeps:
            nearest = min(beeps, key=lambda beep: abs(beep - flash))
            if abs(nearest - flash) < 0.5:
                offsets.append(round((nearest - flash) * 1000, 2))
    worst = max((abs(offset) for offset in offsets), default=None)
    report = {"flashes": len(flashes), "beeps": len(beeps), "pairs": len(offsets),
              "offsets_ms": offsets, "max_abs_offset_ms": worst}
    print(json.dumps(report))
    ok = len(offsets) >= arguments.min_pairs and worst is not None and worst <= arguments.max_offset_ms
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
