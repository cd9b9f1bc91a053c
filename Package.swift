// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "hlscap",
    products: [
        .executable(name: "hlscap", targets: ["hlscap"]),
        .library(name: "HLSKit", targets: ["HLSKit"]),
        // For the fuzzers of what reaches the server (Fuzz/).
        .library(name: "HLSServer", targets: ["HLSServer"]),
    ],
    targets: [
        .systemLibrary(
            name: "CFFmpeg",
            pkgConfig: "libavformat",
            providers: [.apt(["libavcodec-dev", "libavformat-dev", "libavdevice-dev",
                              "libavfilter-dev", "libavutil-dev", "libswscale-dev", "libswresample-dev"])]
        ),
        .systemLibrary(name: "CV4L2"),
        .systemLibrary(name: "CMicroHTTPD", pkgConfig: "libmicrohttpd", providers: [.apt(["libmicrohttpd-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CYAML", pkgConfig: "yaml-0.1", providers: [.apt(["libyaml-dev"])]),
        .systemLibrary(name: "CEpoll"),
        .systemLibrary(name: "CSSL", pkgConfig: "libssl", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CNGHTTP2", pkgConfig: "libnghttp2", providers: [.apt(["libnghttp2-dev"])]),
        .systemLibrary(name: "CHTTPParser", providers: [.apt(["libhttp-parser-dev"])]),
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .target(name: "HLSBase"),
        .target(name: "HLSCrypto", dependencies: ["CCrypto"]),
        .target(name: "HLSKit"),
        .target(name: "HLSConfig", dependencies: ["CYAML"]),
        .target(name: "HLSOutput", dependencies: ["CCurl", "HLSBase", "HLSCrypto", "HLSKit"]),
        .target(
            name: "HLSMedia",
            dependencies: ["CFFmpeg", "CV4L2", "HLSBase", "HLSKit"]
        ),
        .target(
            name: "HLSEngine",
            dependencies: ["HLSBase", "HLSMedia", "HLSOutput", "HLSKit"]
        ),
        .target(
            name: "HLSServer",
            dependencies: ["CMicroHTTPD", "CEpoll", "CHTTPParser", "CNGHTTP2", "CSSL", "CZlib", "HLSBase", "HLSCrypto", "HLSKit", "HLSOutput"]
        ),
        .executableTarget(
            name: "hlscap",
            dependencies: ["HLSBase", "HLSConfig", "HLSCrypto", "HLSKit", "HLSOutput", "HLSMedia", "HLSEngine",
                           "HLSServer"]
        ),
        .target(name: "HLSTestSupport", dependencies: ["HLSKit", "HLSOutput"], path: "Tests/HLSTestSupport"),
        .testTarget(name: "HLSKitTests", dependencies: ["HLSKit", "HLSTestSupport"]),
        .testTarget(name: "HLSOutputTests", dependencies: ["HLSOutput", "HLSCrypto", "HLSKit", "HLSTestSupport"]),
        .testTarget(name: "HLSBaseTests", dependencies: ["HLSBase"]),
        .testTarget(name: "HLSCryptoTests", dependencies: ["HLSCrypto"]),
        .testTarget(name: "HLSConfigTests", dependencies: ["HLSConfig"]),
        .testTarget(name: "HLSMediaTests", dependencies: ["HLSMedia", "HLSBase", "HLSKit", "HLSTestSupport"]),
        .testTarget(name: "HLSEngineTests", dependencies: ["HLSEngine", "HLSBase", "HLSMedia", "HLSOutput", "HLSKit", "HLSTestSupport"]),
        .testTarget(name: "HLSServerTests", dependencies: ["HLSServer", "HLSBase", "HLSOutput", "HLSKit", "HLSTestSupport"]),
        .testTarget(name: "hlscapTests", dependencies: ["HLSKit", "HLSOutput", "HLSTestSupport"]),
    ]
)
