import CFuzzerDriver
import Foundation
import HLSKit

/// An HEVC SPS NAL unit (two header bytes included, emulation prevention bytes in place).
@_cdecl("LLVMFuzzerTestOneInput")
func fuzz(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let nalUnit = Array(UnsafeBufferPointer(start: data, count: count))
    if let sps = try? HEVCSequenceParameterSet(parsing: nalUnit) {
        _ = sps.displayWidth
        _ = sps.profileTierLevel.codecsString()
    }
    return 0
}

// Last, after the globals above are initialised: top-level code runs in order.
exit(hlscap_fuzz_run(CommandLine.argc, CommandLine.unsafeArgv, fuzz))
