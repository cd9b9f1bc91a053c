import CFuzzerDriver
import Foundation
import HLSKit

/// What an RTMP client sends, from its first byte (the handshake, chunks, AMF0 commands), as the
/// listener hands it to the inspector: once whole, and again cut in three pieces at places the input
/// chooses. How the bytes arrive must not change what they reveal.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzz(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    let whole = inspect([bytes[...]])
    guard bytes.count >= 2 else { return 0 }
    // Cut points from the last two bytes, so the handshake's length and chunk edges are both reached.
    let first = Int(bytes[bytes.count - 1]) * bytes.count / 256
    let second = first + (bytes.count - first) * Int(bytes[bytes.count - 2]) / 256
    let pieces = inspect([bytes[..<first], bytes[first..<second], bytes[second...]])
    guard whole == pieces else {
        fatalError("the same bytes revealed \(whole) whole and \(pieces) in pieces cut at \(first) and \(second)")
    }
    return 0
}

/// The first publish found, or the first malformed reason; feeding stops at either, as the listener's does.
private func inspect(_ pieces: [ArraySlice<UInt8>]) -> String {
    var inspector = RTMPPublishInspector()
    for piece in pieces {
        do {
            if let finding = try inspector.feed(piece) { return "\(finding)" }
        } catch {
            return "malformed"
        }
    }
    return "nothing yet"
}

// Last, after the globals above are initialised: top-level code runs in order.
exit(hlscap_fuzz_run(CommandLine.argc, CommandLine.unsafeArgv, fuzz))
