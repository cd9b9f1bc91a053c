/// The sample descriptions inside `stsd`:
///
///     avc1                  VisualSampleEntry (14496-12 12.1.3)
///     ├── avcC              AVCDecoderConfigurationRecord (14496-15 5.4.2)
///     ├── pasp              only for non-square pixels
///     └── colr              nclx, only when the colour description is known (14496-12 12.1.5)
///     hvc1                  VisualSampleEntry; parameter sets only in hvcC (14496-15 8.4.1)
///     ├── hvcC              HEVCDecoderConfigurationRecord (14496-15 8.3.3)
///     ├── pasp
///     └── colr
///     mp4a                  AudioSampleEntry (14496-12 12.2.3)
///     └── esds              ES_Descriptor (14496-1 7.2.6.5, 14496-14 5.6)
///         ├── DecoderConfigDescriptor
///         │   └── DecoderSpecificInfo    the AudioSpecificConfig
///         └── SLConfigDescriptor
///
/// An encrypted track's entry is `encv` or `enca`, the same fields and boxes, then (ISO/IEC 23001-7 8):
///
///     sinf
///     ├── frma              the entry's own type (avc1, hvc1, mp4a)
///     ├── schm              'cbcs', version 1.0
///     └── schi
///         └── tenc          version 1: pattern, KID, constant IV
enum SampleEntry {
    /// The only entry in `dref`.
    private static let dataReferenceIndex: UInt16 = 1
    /// 72 dpi in 16.16 fixed point, the value every writer uses.
    private static let resolution72dpi: UInt32 = 0x0048_0000
    private static let framesPerSample: UInt16 = 1
    private static let compressorNameLength = 32
    /// Colour images with no alpha.
    private static let depth24Bit: UInt16 = 0x0018
    private static let audioSampleSizeBits: UInt16 = 16
    /// full_range_flag, followed by 7 reserved bits.
    private static let fullRangeBit: UInt8 = 0x80

    static func writeAVC(_ writer: inout ByteWriter, _ format: H264Format, key: SampleEncryption.TrackKey? = nil) {
        let sampleAspectRatio = try? format.decoderConfiguration.parsedSequenceParameterSet().sampleAspectRatio
        writeVisual(&writer, key == nil ? "avc1" : "encv", width: format.width, height: format.height) { avc1 in
            avc1.box("avcC") { $0.write(bytes: format.decoderConfiguration.serialized) }
            writePixelAspectRatio(&avc1, sampleAspectRatio)
            writeColour(&avc1, format.colourDescription)
            if let key { writeProtection(&avc1, originalFormat: "avc1", key: key, isVideo: true) }
        }
    }

    static func writeHEVC(_ writer: inout ByteWriter, _ format: HEVCFormat, key: SampleEncryption.TrackKey? = nil) {
        let sampleAspectRatio = try? format.decoderConfiguration.parsedSequenceParameterSet().sampleAspectRatio
        writeVisual(&writer, key == nil ? "hvc1" : "encv", width: format.width, height: format.height) { hvc1 in
            hvc1.box("hvcC") { $0.write(bytes: format.decoderConfiguration.serialized) }
            writePixelAspectRatio(&hvc1, sampleAspectRatio)
            writeColour(&hvc1, format.colourDescription)
            if let key { writeProtection(&hvc1, originalFormat: "hvc1", key: key, isVideo: true) }
        }
    }

    /// `sinf`: what the entry was before encryption, the scheme and the track's key.
    private static func writeProtection(_ writer: inout ByteWriter, originalFormat: FourCC,
                                        key: SampleEncryption.TrackKey, isVideo: Bool) {
        writer.box("sinf") { sinf in
            sinf.box("frma") { $0.write(fourCC: originalFormat) }
            sinf.fullBox("schm", version: 0, flags: 0) { schm in
                schm.write(fourCC: "cbcs")
                schm.write(UInt32(0x0001_0000))  // scheme_version 1.0
            }
            sinf.box("schi") { schi in
                schi.fullBox("tenc", version: 1, flags: 0) { tenc in
                    tenc.write(UInt8(0))  // reserved
                    // Video: 1 block in 10; audio: 0:0, every whole block.
                    tenc.write(isVideo ? SampleEncryption.videoCryptBlocks << 4 | SampleEncryption.videoSkipBlocks : 0)
                    tenc.write(UInt8(1))  // default_isProtected
                    tenc.write(UInt8(0))  // default_Per_Sample_IV_Size: the IV is constant
                    tenc.write(bytes: key.keyID)
                    tenc.write(UInt8(key.constantIV.count))
                    tenc.write(bytes: key.constantIV)
                }
            }
        }
    }

    /// A VisualSampleEntry's fields, then the codec's boxes.
    private static func writeVisual(_ writer: inout ByteWriter, _ type: FourCC, width: Int, height: Int,
                                    boxes: (inout ByteWriter) -> Void) {
        writer.box(type) { entry in
            writeSampleEntryHeader(&entry)
            entry.write(UInt16(0))  // pre_defined
            entry.write(UInt16(0))  // reserved
            entry.write(zeros: 3 * 4)  // pre_defined
            entry.write(UInt16(width))
            entry.write(UInt16(height))
            entry.write(resolution72dpi)  // horizresolution
            entry.write(resolution72dpi)  // vertresolution
            entry.write(UInt32(0))  // reserved
            entry.write(framesPerSample)
            entry.write(zeros: compressorNameLength)
            entry.write(depth24Bit)
            entry.write(Int16(-1))  // pre_defined
            boxes(&entry)
        }
    }

    /// `pasp`, for non-square pixels only: square is what a player assumes without it.
    private static func writePixelAspectRatio(_ writer: inout ByteWriter,
                                              _ ratio: H264SequenceParameterSet.SampleAspectRatio?) {
        guard let ratio, !ratio.isSquare else { return }
        writer.box("pasp") { pasp in
            pasp.write(ratio.horizontal)  // hSpacing
            pasp.write(ratio.vertical)  // vSpacing
        }
    }

    /// `colr` of type `nclx` (14496-12 12.1.5): the H.273 code points and the full range flag in the top bit.
    private static func writeColour(_ writer: inout ByteWriter, _ colour: ColourDescription?) {
        guard let colour else { return }
        writer.box("colr") { colr in
            colr.write(fourCC: "nclx")
            colr.write(UInt16(colour.primaries))
            colr.write(UInt16(colour.transferCharacteristics))
            colr.write(UInt16(colour.matrixCoefficients))
            colr.write(colour.isFullRange ? fullRangeBit : 0)
        }
    }

    static func writeAAC(_ writer: inout ByteWriter, _ format: AACFormat, trackID: UInt32,
                         key: SampleEncryption.TrackKey? = nil) {
        let config = format.audioSpecificConfig
        writer.box(key == nil ? "mp4a" : "enca") { mp4a in
            writeSampleEntryHeader(&mp4a)
            mp4a.write(zeros: 2 * 4)  // reserved
            mp4a.write(UInt16(config.channelCount))
            mp4a.write(audioSampleSizeBits)
            mp4a.write(UInt16(0))  // pre_defined
            mp4a.write(UInt16(0))  // reserved
            // The 16.16 field cannot hold rates above 65535; decoders then read the rate from the
            // AudioSpecificConfig, so 0 is written rather than a wrapped value.
            mp4a.write(config.sampleRate <= Int(UInt16.max) ? FixedPoint.fixed16x16(config.sampleRate) : 0)
            ElementaryStreamDescriptor.write(&mp4a, format, trackID: trackID)
            if let key { writeProtection(&mp4a, originalFormat: "mp4a", key: key, isVideo: false) }
        }
    }

    private static func writeSampleEntryHeader(_ writer: inout ByteWriter) {
        writer.write(zeros: 6)  // reserved
        writer.write(dataReferenceIndex)
    }
}

/// The `esds` box: MPEG-4 Systems descriptors, each a tag and an expandable size.
enum ElementaryStreamDescriptor {
    private enum Tag {
        static let elementaryStream: UInt8 = 0x03
        static let decoderConfig: UInt8 = 0x04
        static let decoderSpecificInfo: UInt8 = 0x05
        static let slConfig: UInt8 = 0x06
    }

    /// objectTypeIndication for MPEG-4 Audio (14496-1 Table 5).
    private static let mpeg4Audio: UInt8 = 0x40
    /// streamType 5 (audio) << 2, upStream 0, reserved bit 1.
    private static let audioStreamTypeByte: UInt8 = 0x05 << 2 | 0x01
    /// SLConfigDescriptor predefined 2: the value 14496-14 requires in MP4 files.
    private static let slConfigPredefinedMP4: UInt8 = 0x02
    /// AAC's decoder input buffer: 6144 bits per channel (14496-3 4.5.3.1).
    private static let bufferBytesPerChannel = 6144 / 8

    static func write(_ writer: inout ByteWriter, _ format: AACFormat, trackID: UInt32) {
        let config = format.audioSpecificConfig
        writer.fullBox("esds", version: 0, flags: 0) { esds in
            descriptor(&esds, tag: Tag.elementaryStream) { es in
                es.write(UInt16(truncatingIfNeeded: trackID))  // ES_ID
                es.write(UInt8(0))  // no stream dependence, URL or OCR stream; priority 0
                descriptor(&es, tag: Tag.decoderConfig) { decoderConfig in
                    decoderConfig.write(mpeg4Audio)
                    decoderConfig.write(audioStreamTypeByte)
                    decoderConfig.write(uint24: UInt32(bufferBytesPerChannel * config.channelCount))
                    decoderConfig.write(format.maxBitrate)
                    decoderConfig.write(format.averageBitrate)
                    descriptor(&decoderConfig, tag: Tag.decoderSpecificInfo) { $0.write(bytes: config.bytes) }
                }
                descriptor(&es, tag: Tag.slConfig) { $0.write(slConfigPredefinedMP4) }
            }
        }
    }

    /// Writes a descriptor: tag, size in 7-bit groups (high bit = more follow), then the body.
    private static func descriptor(_ writer: inout ByteWriter, tag: UInt8, _ body: (inout ByteWriter) -> Void) {
        var content = ByteWriter()
        body(&content)
        writer.write(tag)
        let size = content.count
        var shift = 21
        while shift > 0 && size >> shift == 0 {
            shift -= 7
        }
        while shift > 0 {
            writer.write(UInt8(0x80 | (size >> shift) & 0x7F))
            shift -= 7
        }
        writer.write(UInt8(size & 0x7F))
        writer.write(bytes: content.bytes)
    }
}
