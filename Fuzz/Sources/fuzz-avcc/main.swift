import CFuzzerDriver
import Foundation
import HLSKit

/// An `avcC` payload, and an Annex-B stream read for its parameter sets. A record that parses is
/// written again, as copy mode writes it into the init section, and must read back the same.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzz(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    if let configuration = try? AVCDecoderConfiguration(parsing: bytes) {
        check(configuration)
    }
    if let configuration = try? AVCDecoderConfiguration(annexB: bytes) {
        check(configuration)
    }
    return 0
}

private func check(_ configuration: AVCDecoderConfiguration) {
    _ = configuration.codecsString
    _ = try? configuration.parsedSequenceParameterSet()
    let serialized = configuration.serialized
    guard let again = try? AVCDecoderConfiguration(parsing: serialized), again == configuration else {
        fatalError("avcC written from \(configuration) does not read back: \(serialized)")
    }
}

// Last, after the globals above are initialised: top-level code runs in order.
exit(hlscap_fuzz_run(CommandLine.argc, CommandLine.unsafeArgv, fuzz))
