import CFuzzerDriver
import Foundation
import HLSKit

/// An object store's answer body, as S3-compatible servers (AWS, RADOS Gateway, MinIO) send their XML
/// errors and multipart upload ids: the error code read from it is one the body holds, as a `<Code>`.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzz(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let body = Array(UnsafeBufferPointer(start: data, count: count))
    if let code = PublishResponse.errorCode(inBody: body) {
        let text = String(decoding: body.prefix(4096), as: UTF8.self)
        guard text.contains("<Code>\(code)</Code>") else { fatalError("error code \(code) is not in \(text)") }
    }
    _ = PublishResponse.xmlElement("UploadId", in: body)
    _ = PublishResponse.xmlElement("Message", in: body[...])
    return 0
}

// Last, after the globals above are initialised: top-level code runs in order.
exit(hlscap_fuzz_run(CommandLine.argc, CommandLine.unsafeArgv, fuzz))
