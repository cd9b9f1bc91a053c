import CFuzzerDriver
import Foundation
import HLSKit

/// An AudioSpecificConfig, and the same bytes as an ADTS frame (header, its config, its payload).
@_cdecl("LLVMFuzzerTestOneInput")
func fuzz(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    if let config = try? AudioSpecificConfig(parsing: bytes) {
        _ = config.codecsString
    }
    if let header = try? ADTSHeader(parsing: bytes) {
        _ = try? header.audioSpecificConfig()
    }
    _ = try? ADTSHeader.payload(ofFrame: bytes)
    return 0
}

// Last, after the globals above are initialised: top-level code runs in order.
exit(hlscap_fuzz_run(CommandLine.argc, CommandLine.unsafeArgv, fuzz))
