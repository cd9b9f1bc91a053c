import CFuzzerDriver
import Foundation
import HLSKit

/// A recording file as `hlscap recordings` and the server's `/recordings/index.json` read it: box
/// headers, `moov`, `prft` and `moof` whole. Whatever the bytes, the summary stays inside the file.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzz(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    let (summary, _) = RecordingFileSummary.read(byteCount: bytes.count) { offset, count in
        Array(bytes[offset..<min(bytes.count, offset + count)])
    }
    guard summary.byteCount <= bytes.count, summary.initByteCount <= bytes.count,
          summary.fragments.allSatisfy({ $0.offset >= 0 && $0.offset + $0.byteCount <= bytes.count }) else {
        fatalError("a summary of \(bytes.count) bytes reaches past them: \(summary)")
    }
    _ = summary.start
    _ = summary.end
    _ = summary.durationSeconds
    return 0
}

// Last, after the globals above are initialised: top-level code runs in order.
exit(hlscap_fuzz_run(CommandLine.argc, CommandLine.unsafeArgv, fuzz))
