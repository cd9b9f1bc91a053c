"""A real ALSA capture device without a sound card: ALSA's `file` PCM plugin reads its
capture data from a FIFO, which this script fills with S16_LE stereo 48 kHz at real-time pace.

    python3 alsa_fifo.py DIR SECONDS

creates DIR/fifo and DIR/asound.conf (defining the PCM `hlscapfifo`), prints the line
`ALSA_CONFIG_PATH=<system alsa.conf>:DIR/asound.conf`, then waits for a reader to open the PCM
and writes SECONDS of audio. Left channel: the sample index modulo 65536 as a signed 16-bit
counter, so a reader can check that no sample was lost or repeated; right channel: its negation.
Exits 0 when everything was written or the reader went away.
"""
import os
import struct
import sys
import time

PCM_NAME = "hlscapfifo"
SAMPLE_RATE = 48000
CHANNELS = 2
CHUNK_FRAMES = 480  # 10 ms: small enough that the reader never waits long
SYSTEM_CONFIG = "/usr/share/alsa/alsa.conf"

CONFIG = """pcm.{name} {{
    type file
    slave.pcm "null"
    file "/dev/null"
    infile "{fifo}"
    format "raw"
}}
"""


def counter_value(index):
    """The left sample for sample `index`: its low 16 bits, read as signed."""
    value = index % 65536
    return value - 65536 if value >= 32768 else value


def chunk(first, count):
    samples = []
    for index in range(first, first + count):
        left = counter_value(index)
        samples += [left, -left if left != -32768 else 32767]
    return struct.pack("<%dh" % len(samples), *samples)


def main():
    directory, seconds = sys.argv[1], float(sys.argv[2])
    fifo = os.path.join(directory, "fifo")
    config = os.path.join(directory, "asound.conf")
    if not os.path.exists(fifo):
        os.mkfifo(fifo)
    with open(config, "w") as handle:
        handle.write(CONFIG.format(name=PCM_NAME, fifo=fifo))
    print("ALSA_CONFIG_PATH=%s:%s" % (SYSTEM_CONFIG, config), flush=True)

    total = int(seconds * SAMPLE_RATE)
    with open(fifo, "wb", buffering=0) as out:  # blocks until the PCM is opened
        start = time.monotonic()
        written = 0
        try:
            while written < total:
                count = min(CHUNK_FRAMES, total - written)
                out.write(chunk(written, count))
                written += count
                delay = start + written / SAMPLE_RATE - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
        except BrokenPipeError:
            pass


if __name__ == "__main__":
    main()
