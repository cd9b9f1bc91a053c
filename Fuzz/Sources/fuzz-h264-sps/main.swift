import CFuzzerDriver
import Foundation
import HLSKit

/// An H.264 SPS NAL unit (header byte included, emulation prevention bytes in place).
@_cdecl("LLVMFuzzerTestOneInput")
func fuzz(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let nalUnit = Array(UnsafeBufferPointer(start: data, count: count))
    if let sps = try? H264SequenceParameterSet(parsing: nalUnit) {
        _ = sps.displayWidth
    }
    return 0
}

// Last, after the globals above are initialised: top-level code runs in order.
exit(hlscap_fuzz_run(CommandLine.argc, CommandLine.unsafeArgv, fuzz))
