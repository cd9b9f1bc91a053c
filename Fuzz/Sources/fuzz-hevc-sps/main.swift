import CFuzzerDriver
import Foundation
import HLSKit

exit(hlscap_fuzz_run(CommandLine.argc, CommandLine.unsafeArgv, fuzz))

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
