// swift-tools-version:6.0
import Foundation
import PackageDescription

// libFuzzer targets for HLSKit's and the server's parsers, one executable each; `make fuzz-parsers` builds them
// with -sanitize=fuzzer,address. A package of its own, so the main build never sees the flags.
let fuzzers = [
    "fuzz-playlist", "fuzz-h264-sps", "fuzz-hevc-sps", "fuzz-avcc", "fuzz-hvcc", "fuzz-audio-config",
    "fuzz-mp4-box", "fuzz-segment", "fuzz-rtmp-publish", "fuzz-s3-error", "fuzz-recording-summary",
]
/// Parsers of what reaches the built-in server, which need HLSServer.
let serverFuzzers = ["fuzz-http-request", "fuzz-access-control"]

// SwiftPM names a path dependency after its directory, which is whatever the checkout is called.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
let rootIdentity = root.lastPathComponent.lowercased()

let package = Package(
    name: "hlscap-fuzz",
    dependencies: [.package(path: "..")],
    targets: [.target(name: "CFuzzerDriver")] + fuzzers.map { name in
        .executableTarget(name: name, dependencies: ["CFuzzerDriver", .product(name: "HLSKit", package: rootIdentity)],
                          path: "Sources/\(name)")
    } + serverFuzzers.map { name in
        .executableTarget(name: name, dependencies: ["CFuzzerDriver", .product(name: "HLSKit", package: rootIdentity),
                                                     .product(name: "HLSServer", package: rootIdentity)],
                          path: "Sources/\(name)")
    }
)
