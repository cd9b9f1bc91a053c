# hlscap developer entry points. `make test` is what CI runs (through .ci/run).
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c

SWIFT ?= swift
# Flags every build and test run passes to SwiftPM; CI (.ci/run) makes compiler warnings errors with it.
# One value for every run of a build directory, so that `swift test` does not build it again.
SWIFT_BUILD_FLAGS ?=
HLSCAP := .build/debug/hlscap
DEMO_SECONDS := 20
DEMO_PORT := 8000

# A real S3 store for the object-storage tests: Ceph's RADOS Gateway on a one-node cluster that
# Tests/Tools/s3_gateway.py starts and stops; libcrypto signs the requests (Signature V4); faketime
# runs hlscap with a skewed clock; boto3, from PyPI into .build/python, reads back what was stored.
# Defined before DEPS_PACKAGES, whose := expands it where it is written.
S3_PACKAGES := ceph-mon ceph-osd radosgw ceph-common uuid-runtime libssl-dev faketime python3-venv

# FFmpeg headers and pkg-config for the CFFmpeg target (libavfilter's drawtext for --overlay);
# ffmpeg/ffprobe, Chromium and Python for the end-to-end checkers; GStreamer as a second,
# independent HLS decoder; fonts so headless Chromium renders text and --overlay draws the time;
# GNU time and perf for bench; nginx (its DAV module takes PUT and DELETE) as the origin that publishing
# tests upload to, the CDN edge in front of the built-in server, and what
# bench measures the built-in server against, with wrk giving the requests.
# libcurl's development link, because the release build links the Swift runtime and Foundation
# statically and FoundationNetworking links libcurl. libmicrohttpd and zlib for the built-in server;
# libyaml for the file `hlscap run` reads;
# Prometheus's parser, curl and openssl for its tests; pip and unzip fetch hls.js from PyPI.
# nghttp2 (HTTP/2), libssl and http-parser (HTTP/1.1 over TLS) for the built-in HTTPS server;
# nghttp2-client's nghttp and h2load for its tests, python3-h2 for its hostile clients.
DEPS_PACKAGES := libnghttp2-dev libssl-dev libhttp-parser-dev nghttp2-client python3-h2 libavcodec-dev libavformat-dev libavdevice-dev libavfilter-dev libavutil-dev libswscale-dev \
	libswresample-dev pkg-config ffmpeg chromium python3 fonts-dejavu-core time nginx \
	gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good gstreamer1.0-plugins-bad \
	gstreamer1.0-libav libcurl4-openssl-dev libmicrohttpd-dev zlib1g-dev libyaml-dev python3-prometheus-client \
	gstreamer1.0-plugins-ugly gir1.2-gst-rtsp-server-1.0 python3-gi \
	python3-pip unzip curl openssl systemd wrk linux-perf $(S3_PACKAGES)

# Debian's kernel, qemu and a static busybox for the capture-driver VM (scripts/vm/run-in-vm.sh);
# v4l-utils and alsa-utils for the tools that probe the drivers inside it.
VM_PACKAGES := qemu-system-x86 linux-image-amd64 busybox-static cpio kmod v4l-utils alsa-utils
# v4l2loopback, a camera that offers H.264 in the VM, built by DKMS against the headers of the VM's kernel
# (named once that kernel is installed, so the module is built for it and not for a newer headers package).
VM_MODULE_PACKAGES = linux-headers-$$(scripts/vm/kernel-version.sh) v4l2loopback-dkms

# Where `make install` puts hlscap: PREFIX/bin, PREFIX/lib/systemd/system, PREFIX/share/doc/hlscap and
# SYSCONFDIR/hlscap, each below DESTDIR when it is given (a package's staging folder).
PREFIX ?= /usr/local
SYSCONFDIR ?= /etc
DESTDIR ?=
# The binary install-files copies; `make install` builds the release one first.
HLSCAP_INSTALL_BIN ?= .build/release/hlscap

.PHONY: install install-files deps build release check test test-build sanitizer-builds test-tools test-fuzz-parsers test-devices soak soak-publish soak-s3 bench-s3-fleet recording-hour latency crash-campaign clock-drift fuzz fuzz-parsers test-sanitizers golden demo bench fixtures clean

deps:
	scripts/install-deps.sh $(DEPS_PACKAGES)
	scripts/fetch-hlsjs.sh
	scripts/install-boto3.sh

build: deps
	$(SWIFT) build $(SWIFT_BUILD_FLAGS)

# The binary to install: optimised, with the Swift runtime and Foundation linked in, which
# leaves 145 shared libraries to load instead of 160 and a live stream about 8 MB smaller.
# The toolchain's lld packs the relative relocations (DT_RELR, glibc 2.36): 15 KB instead of
# 1.9 MB to read and apply at start-up, 2 MB less resident.
RELEASE_FLAGS := -c release --static-swift-stdlib -Xswiftc -use-ld=lld -Xlinker -z -Xlinker pack-relative-relocs
release: deps
	$(SWIFT) build $(RELEASE_FLAGS) $(SWIFT_BUILD_FLAGS)
	.build/release/hlscap --version

# The release binary, the service (contrib/systemd/hlscap.service, naming PREFIX/bin/hlscap) and the
# commented example as SYSCONFDIR/hlscap/hlscap.yml, unless a file is there already: it is the operator's.
install: release
	$(MAKE) install-files

install-files:
	install -D -m 0755 $(HLSCAP_INSTALL_BIN) $(DESTDIR)$(PREFIX)/bin/hlscap
	install -d $(DESTDIR)$(PREFIX)/lib/systemd/system
	sed -e 's|/usr/local/bin/hlscap|$(PREFIX)/bin/hlscap|' -e 's|/usr/local/share/doc/hlscap|$(PREFIX)/share/doc/hlscap|' \
		-e 's|/etc/hlscap/|$(SYSCONFDIR)/hlscap/|g' \
		contrib/systemd/hlscap.service > $(DESTDIR)$(PREFIX)/lib/systemd/system/hlscap.service
	chmod 0644 $(DESTDIR)$(PREFIX)/lib/systemd/system/hlscap.service
	install -D -m 0644 README.md $(DESTDIR)$(PREFIX)/share/doc/hlscap/README.md
	install -d $(DESTDIR)$(PREFIX)/share/doc/hlscap/docs
	install -m 0644 docs/*.md $(DESTDIR)$(PREFIX)/share/doc/hlscap/docs/
	install -d $(DESTDIR)$(SYSCONFDIR)/hlscap
	test -e $(DESTDIR)$(SYSCONFDIR)/hlscap/hlscap.yml || install -m 0644 contrib/hlscap.yml $(DESTDIR)$(SYSCONFDIR)/hlscap/hlscap.yml

# The loop to run while working: the build and every test that runs in process (the pure core, the
# stores and writers, FFmpeg's wrappers and the capture sources, the live engine on the test source
# into a store in memory, the server, the run file's reader), about two minutes. `make test` adds the built binary's runs.
UNIT_TESTS := HLSBaseTests|HLSCryptoTests|HLSKitTests|HLSOutputTests|HLSMediaTests|HLSEngineTests|HLSServerTests|HLSConfigTests
check: build
	$(SWIFT) build --build-tests $(SWIFT_BUILD_FLAGS)
	$(SWIFT) test --skip-build --filter '$(UNIT_TESTS)' 2>&1 | tee .build/swift-check.log

# The checkers' own tests run first: an end-to-end result means nothing if they cannot fail. The
# parser fuzzers (test-fuzz-parsers) build and run in the background at idle priority meanwhile
# (scripts/background.sh): they take only the CPU the tests leave, and `make test` waits for them last.
# Then the suites that measure timing against the capture or play live in Chromium (QUIET_TESTS) run
# one at a time with no other test beside them: live runs and ALSA capture are paced in real time and
# must not share two cores with Chromium and transcoding. The rest then runs in two lanes side by
# side, each one test at a time: the suites that mostly wait on cameras, stalls, retries and a proxy
# (LIGHT_TESTS, the soak's small stream among them: a third of a core between them) beside every other
# suite, the in-process ones included. The suites that package files and read them back (FILE_TESTS:
# no live capture, no server, no player, nothing timed) then run side by side, two test processes
# (FILE_GROUPS, which together take every suite FILE_TESTS names) each running its suites at once.
# The published runs through the fault proxy (PARALLEL_TESTS) run last, four at once, two test
# processes of two (PARALLEL_GROUPS, which together take every test PARALLEL_TESTS names): small
# pictures, mostly waiting on stalls and retries, and nothing in them is timed against the capture.
# Beside them, one test at a time, the S3 suite (LAST_TESTS): each test waits on a Ceph cluster of its own,
# with cameras of 320x180.
FILE_TESTS := hlscapTests\.(HostileFileTests|GoldenSegmentTests|DevicesCommandTests|BadInputTests|CopyBadInputTests|TranscodeBadInputTests|CopyModeStreamTests|TranscodeStreamTests|VariableFrameRateTests|CutPointTests)
FILE_GROUPS := 'hlscapTests\.(HostileFileTests|GoldenSegmentTests|DevicesCommandTests|BadInputTests|CopyBadInputTests|TranscodeBadInputTests)' \
	'hlscapTests\.(CopyModeStreamTests|TranscodeStreamTests|VariableFrameRateTests|CutPointTests)'
PARALLEL_TESTS := PublishWindowFaultTests|PublishLiveFaultTests
PARALLEL_GROUPS := 'PublishLiveFaultTests|PublishWindowFaultTests/anOutage' 'PublishWindowFaultTests/(?!anOutage)'
LAST_TESTS := hlscapTests\.PublishS3StoreTests
QUIET_TESTS := hlscapTests\.(LowLatencyTests|LiveRunTests|LiveClockDriftTests|TranscodeChromiumTests|ChromiumPlaybackTests|LiveLadderTests|RecordingRangeChromiumTests|RecordingRangeTests|ServeCommandTests|RunServerTests)
LIGHT_TESTS := hlscapTests\.(SoakTests|NetworkInputTests|HTTPInputTests|ListenInputTests|PublishFaultTests|PublishOriginTests|RunStreamsTests|RunReloadTests|RunIsolationTests|ServiceUnitTests|StorageFaultTests|ServeSlowClientTests|LiveStopTests|LiveResumeTests)
test: test-build test-tools
	scripts/background.sh start fuzz-parsers $(MAKE) --no-print-directory test-fuzz-parsers FUZZ_PARSER_TIMEOUT=60
	trap 'scripts/background.sh stop fuzz-parsers' ERR; \
	scripts/tests-side-by-side.sh --serial '$(QUIET_TESTS)' 2>&1 | tee .build/swift-test.log; \
	scripts/tests-side-by-side.sh --serial '.*::$(QUIET_TESTS)|$(LIGHT_TESTS)|$(FILE_TESTS)|$(PARALLEL_TESTS)|$(LAST_TESTS)' '$(LIGHT_TESTS)' \
		2>&1 | tee -a .build/swift-test.log; \
	scripts/tests-side-by-side.sh $(FILE_GROUPS) 2>&1 | tee -a .build/swift-test.log; \
	scripts/tests-side-by-side.sh $(PARALLEL_GROUPS) '$(LAST_TESTS)' 2>&1 | tee -a .build/swift-test.log
	scripts/background.sh wait fuzz-parsers

# The test binary with every test target in it. The runs of `make test` start it directly
# (tests-side-by-side.sh): that holds no lock on .build, so a build of another configuration (CI's
# sanitizer and release builds) can go on beside them.
test-build: build
	$(SWIFT) build --build-tests $(SWIFT_BUILD_FLAGS)

test-tools: deps
	PYTHONDONTWRITEBYTECODE=1 python3 -m unittest discover -s Tests/Tools -p 'test_*.py'

# Real capture drivers (vivid, snd-aloop, and v4l2loopback as an H.264 camera) in a VM that boots
# Debian's kernel under emulation. See docs/test-devices.md.
test-devices: build
	scripts/install-deps.sh $(VM_PACKAGES)
	scripts/install-deps.sh $(VM_MODULE_PACKAGES)
	scripts/vm/test-devices.sh

# An hour of live 720p30 published through a proxy that fails 20 % of requests (503, stalls past the
# timeout, resets): resident memory, descriptors and threads flat after a 2-minute warm-up, no frame
# dropped after it, A/V within 10 ms in the origin's first and last windows, the origin never lists a
# file it lacks and gets every segment, the stream validates, and hlscap exits 0. `make test` runs 80 s
# at 640x360.
SOAK_SECONDS ?= 3600
soak: build
	HLSCAP_SOAK_SECONDS=$(SOAK_SECONDS) HLSCAP_SOAK_SIZE=1280x720 $(SWIFT) test $(SWIFT_BUILD_FLAGS) --filter 'SoakTests' 2>&1 \
		| tee .build/soak.log

# 10 live runs of 60 s published through a proxy that fails 30 % of requests (503, stalls past
# the timeout, resets): in every run the origin never lists a file it lacks, gets every segment,
# ends with ENDLIST, and hlscap exits 0. `make test` runs the short version (2 runs of 30 s).
SOAK_PUBLISH_RUNS ?= 10
SOAK_PUBLISH_SECONDS ?= 60
soak-publish: build
	HLSCAP_SOAK_PUBLISH_RUNS=$(SOAK_PUBLISH_RUNS) HLSCAP_SOAK_PUBLISH_SECONDS=$(SOAK_PUBLISH_SECONDS) \
		$(SWIFT) test $(SWIFT_BUILD_FLAGS) --filter 'PublishWindowFaultTests/failedRequestsNeverMakeTheOriginListAMissingFile' 2>&1 \
		| tee .build/soak-publish.log

# An hour of 320x180 recording made out of real time in files of 10 minutes, a range across two files
# and a gap served, validated, decoded and played (Chromium and hls.js); prints how long the hour took
# to make. `make test` records 40 s in files of 10 s.
RECORDING_SECONDS ?= 3600
recording-hour: build
	HLSCAP_RECORDING_SECONDS=$(RECORDING_SECONDS) $(SWIFT) test $(SWIFT_BUILD_FLAGS) --no-parallel --filter 'RecordingRangeTests' 2>&1 \
		| tee .build/recording-hour.log

# Glass-to-glass latency in Chromium without --low-latency, with its 334 ms parts, and with 200 ms
# parts over https (h2), and 200 clients loading the built-in server, each for LATENCY_SECONDS (the
# lengths the low-latency work is measured over).
# `make test` runs 15 s of each.
LATENCY_SECONDS ?= 60
latency: build
	HLSCAP_LATENCY_SECONDS=$(LATENCY_SECONDS) HLSCAP_LOAD_SECONDS=$(LATENCY_SECONDS) \
		$(SWIFT) test $(SWIFT_BUILD_FLAGS) --no-parallel --filter 'LowLatencyTests/(latencyInChromium|twoHundredClients)' 2>&1 \
		| tee .build/latency.log

# kill -9 at seeded random instants of live runs (plain, --publish to nginx, --ladder, --record) and
# `hlscap file` runs: every listed file decodes, the stream validates, a file run leaves no playlist,
# --resume continues with the right DISCONTINUITY-SEQUENCE. `make test` runs one run of each kind.
CRASH_RUNS ?= 50
CRASH_SEED ?= 1
crash-campaign: build
	HLSCAP_CRASH_RUNS=$(CRASH_RUNS) HLSCAP_CRASH_SEED=$(CRASH_SEED) \
		$(SWIFT) test $(SWIFT_BUILD_FLAGS) --filter 'CrashConsistencyTests' 2>&1 | tee .build/crash-campaign.log

# A microphone 0.5 % fast and one 0.5 % slow (the test tone from such a clock), ten minutes each: every
# beep within 10 ms of its flash from start to end, the audio stretched rather than cut or padded.
# `make test` runs 20 s of each.
DRIFT_SECONDS ?= 600
clock-drift: build
	HLSCAP_DRIFT_SECONDS=$(DRIFT_SECONDS) $(SWIFT) test $(SWIFT_BUILD_FLAGS) --filter 'LiveClockDriftTests' 2>&1 | tee .build/clock-drift.log

# Seeded mutations of every media fixture through `hlscap file` (automatic, --copy, --transcode): exit
# 0 or 65 only, within 30 s, and every exit-0 stream validates. `make test` runs the first 78 cases (each fixture in each mode twice).
FUZZ_CASES ?= 2000
FUZZ_SEED ?= 1
fuzz: build
	HLSCAP_FUZZ_CASES=$(FUZZ_CASES) HLSCAP_FUZZ_SEED=$(FUZZ_SEED) \
		$(SWIFT) test $(SWIFT_BUILD_FLAGS) --filter 'HostileFileTests' 2>&1 | tee .build/fuzz.log

# libFuzzer targets for the parsers (Fuzz/: playlists, H.264 and HEVC SPS, avcC, hvcC,
# AudioSpecificConfig and ADTS, the box reader, the validator on one segment; and what comes from the
# network: an RTMP publisher's bytes, requests to the server, credentials and signed URLs, object
# stores' error bodies, recording files as the recordings index reads them), each under
# AddressSanitizer for FUZZ_PARSER_SECONDS after replaying its committed corpus (Fuzz/Corpus/). A
# package of its own, built into .build/fuzz, so the flags never reach the main build. lld, because
# gold stops with an internal error on these links. New inputs collect in .build/fuzz-corpus/,
# failing ones in .build/fuzz-crashes/. `make test` replays the corpus and makes 20,000 runs per target
# from a fixed seed, the same inputs on every machine.
# FUZZ_PARSER_TARGETS="fuzz-avcc fuzz-hvcc" runs only those.
FUZZ_PARSER_SECONDS ?= 300
FUZZ_PARSER_TARGETS ?=
FUZZ_PARSER_TEST_RUNS ?= 20000
FUZZ_PARSER_TIMEOUT ?= 10
FUZZ_PARSERS_BUILD := $(SWIFT) build --package-path Fuzz --build-path .build/fuzz -c debug \
	-Xswiftc -sanitize=fuzzer,address -Xswiftc -use-ld=lld $(SWIFT_BUILD_FLAGS)
fuzz-parsers: deps
	$(FUZZ_PARSERS_BUILD)
	scripts/fuzz-parsers.sh $(FUZZ_PARSER_SECONDS) $(FUZZ_PARSER_TARGETS) 2>&1 | tee .build/fuzz-parsers.log

test-fuzz-parsers: deps
	$(FUZZ_PARSERS_BUILD)
	FUZZ_PARSER_RUNS=$(FUZZ_PARSER_TEST_RUNS) FUZZ_PARSER_TIMEOUT=$(FUZZ_PARSER_TIMEOUT) scripts/fuzz-parsers.sh 0 2>&1 | tee .build/test-fuzz-parsers.log

# The unit tests under AddressSanitizer (leaks included; scripts/lsan-suppressions.txt names the ones
# inside Foundation), and the threaded code under ThreadSanitizer: the publisher, the capture
# threads, the live engine and the HTTP server in process, and live, published, crashed and served runs of an hlscap
# built with it. A stop that waits out retention, and a second interrupt that cuts the wait short, run in
# process (LiveEngineTests); the binary's live runs are those that signals, devices and uploads end.
# CI runs all of it. Each sanitizer builds into its own directory, so the debug build stays as it is.
SANITIZER_ASAN := --sanitize=address --build-path .build/asan
SANITIZER_TSAN := --sanitize=thread --build-path .build/tsan
TSAN_UNIT_TESTS := PublishStreamPublisherTests|HeaderDeadlinesTests|CaptureThreadTests|CaptureTestSourceTests|CaptureMicrophoneTests|CodecPictureTests|StreamServerTests|LiveEngineTests
TSAN_END_TO_END_TESTS := LiveStopTests/(aSignal|aSecondInterrupt|aMissingDevice)|PublishLiveFaultTests|CrashConsistencyTests|ServeCommandTests/(?!aProtectedStream)|LowLatencyTests/aLadderReports|LowLatencyTests/httpsServes
test-sanitizers: sanitizer-builds
	LSAN_OPTIONS=suppressions=$(CURDIR)/scripts/lsan-suppressions.txt \
		$(SWIFT) test --skip-build $(SANITIZER_ASAN) --disable-xctest --filter 'HLSBaseTests|HLSCryptoTests|HLSKitTests|HLSOutputTests|HLSMediaTests|HLSEngineTests' 2>&1 \
		| tee .build/asan-test.log
	TSAN_OPTIONS=halt_on_error=1 $(SWIFT) test --skip-build $(SANITIZER_TSAN) --disable-xctest \
		--filter '$(TSAN_UNIT_TESTS)' 2>&1 | tee .build/tsan-test.log
	HLSCAP_BIN=$(CURDIR)/.build/tsan/debug/hlscap TSAN_OPTIONS=halt_on_error=1 \
		$(SWIFT) test --skip-build $(SANITIZER_TSAN) --disable-xctest --filter '$(TSAN_END_TO_END_TESTS)' 2>&1 \
		| tee -a .build/tsan-test.log

# The two builds test-sanitizers runs, each with its tests; CI makes them in the background while
# `make test` runs (see .ci/run).
sanitizer-builds: deps
	$(SWIFT) build --build-tests $(SANITIZER_ASAN) $(SWIFT_BUILD_FLAGS)
	$(SWIFT) build --build-tests $(SANITIZER_TSAN) $(SWIFT_BUILD_FLAGS)

# Rewrites Fixtures/golden/ from the committed inputs; review the diff before committing it.
golden: build
	scripts/make-golden.sh

# The main job on the built-in test source: about 20 s of live capture into demo-out/.
demo: build
	$(HLSCAP) live --video test --audio test --size 1280x720 --duration $(DEMO_SECONDS) --window 0 \
		--out demo-out --overwrite
	@echo
	@echo "A live HLS stream of the test source is in demo-out/ (playlist.m3u8, init.mp4, seg/)."
	@echo "To watch it, serve the directory:"
	@echo "  $(HLSCAP) serve demo-out --listen :$(DEMO_PORT)"
	@echo "then open http://localhost:$(DEMO_PORT)/ (a preview page) or"
	@echo "http://localhost:$(DEMO_PORT)/playlist.m3u8 in Safari or Chromium, or run"
	@echo "  ffplay http://localhost:$(DEMO_PORT)/playlist.m3u8"

# Not part of `test`: it needs minutes and a release build.
bench: release
	HLSCAP_BIN=.build/release/hlscap scripts/bench.sh

# Many cameras into one bucket: FLEET_CAMERAS live streams of the test source (FLEET_SIZE) publishing
# to one RADOS Gateway at once for FLEET_SECONDS; PUT and listing times (p50, p99), CPU and memory
# per stream and the gateway's own. CI runs 3 cameras for 12 s (PublishS3StoreTests).
FLEET_CAMERAS ?= 8
FLEET_SECONDS ?= 60
FLEET_SIZE ?= 320x180
bench-s3-fleet: release
	.build/python/bin/python3 Tests/Tools/s3_fleet.py --hlscap .build/release/hlscap --cameras $(FLEET_CAMERAS) \
		--seconds $(FLEET_SECONDS) --size $(FLEET_SIZE) 2>&1 | tee .build/bench-s3-fleet.log

# A live window published to the gateway through the fault proxy (30 % failed PUTs, stalls, resets,
# an outage longer than the window) for S3_SOAK_SECONDS; CI runs 30 s.
S3_SOAK_SECONDS ?= 600
soak-s3: build
	HLSCAP_S3_FAULT_SECONDS=$(S3_SOAK_SECONDS) $(SWIFT) test $(SWIFT_BUILD_FLAGS) \
		--filter 'PublishS3StoreTests/aLiveWindowThroughFaults' 2>&1 | tee .build/soak-s3.log

# Regenerates the fixture inputs; tests always use the committed bytes.
fixtures:
	Fixtures/make-fixtures.sh

clean:
	$(SWIFT) package clean
	rm -rf demo-out bench-out
