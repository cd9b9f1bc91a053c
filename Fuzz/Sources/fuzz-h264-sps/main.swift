import CFuzzerDriver
import Foundation
import HLSKit

exit(hlscap_fuzz_run(CommandLine.argc, CommandLine.unsafeArgv, fuzz))

/// An H.264 SPS NAL unit (header byte included, emulation prevention bytes in place).
@_cdecl("LLVMFuzzerTestOneInput")
func fuzz(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let nalUnit = Array(UnsafeBufferPointer(start: data, count: count))
    if let sps = try? H264SequenceParameterSet(parsing: nalUnit) {
        _ = sps.displayWidth
    }
    return 0
}
