import CFuzzerDriver
import Foundation
import HLSKit

/// ISO-BMFF bytes through the box reader, then every field decoder on every box it found, and the
/// codec configurations inside sample entries through their parsers, as the validator reads them.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzz(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    guard let boxes = try? MP4Box.parse(bytes) else { return 0 }
    var pending = boxes
    while let box = pending.popLast() {
        pending.append(contentsOf: box.children)
        decodeFields(box)
    }
    _ = boxes.all("moov/trak/mdia/minf/stbl/stsd")
    _ = boxes.first("moof/traf/tfdt")
    return 0
}

private func decodeFields(_ box: MP4Box) {
    _ = try? box.sequenceNumber()
    _ = try? box.trackFragmentTrackID()
    _ = try? box.baseDecodeTime()
    _ = try? box.mediaTimescale()
    _ = try? box.mediaLanguage()
    _ = try? box.handlerType()
    _ = try? box.colourInformation()
    _ = try? box.decoderConfiguration()
    _ = try? box.trackHeader()
    _ = try? box.trackRun()
    _ = try? box.trackExtends()
    _ = try? box.trackFragmentHeader()
    _ = try? box.visualSampleEntrySize()
    _ = try? box.audioSampleEntry()
    if let record = try? box.avcConfigurationBytes() {
        _ = try? AVCDecoderConfiguration(parsing: record).parsedSequenceParameterSet()
    }
    if let record = try? box.hevcConfigurationBytes() {
        _ = try? HEVCDecoderConfiguration(parsing: record).parsedSequenceParameterSet()
    }
    if let config = try? box.audioSpecificConfigBytes() {
        _ = try? AudioSpecificConfig(parsing: config)
    }
}

// Last, after the globals above are initialised: top-level code runs in order.
exit(hlscap_fuzz_run(CommandLine.argc, CommandLine.unsafeArgv, fuzz))
