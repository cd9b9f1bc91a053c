import HLSKit

extension InputStreamInfo {
    /// FFmpeg's name for H.265/HEVC, whatever the container called it (hvc1, hev1, Annex-B in TS or MKV).
    var isHEVC: Bool { kind == .video && codecName == Self.hevcCodecName }

    private static let hevcCodecName = "hevc"
}

/// HEVC copying: the parameter sets come from the container's record (`hvcC` in MP4, MOV and Matroska),
/// from Annex-B extradata, or from the first samples that carry them in-band (MPEG-TS, `hev1`); samples
/// keep their NAL units, and IRAP pictures (IDR, CRA, BLA) are the sync samples segments start at.
extension CopySource {
    /// An `hvcC` record starts with configurationVersion 1; Annex-B data with a start code.
    private static let recordVersion: UInt8 = 1

    static func hevcConfiguration(
        _ stream: InputStreamInfo, streamIndex: Int, demuxer: FileDemuxer, readAhead: inout [DemuxedPacket]
    ) throws -> (NALUnitFraming, HEVCDecoderConfiguration) {
        if stream.extradata.first == recordVersion {
            let record: HEVCDecoderConfiguration
            do {
                record = try HEVCDecoderConfiguration(parsing: stream.extradata)
            } catch {
                throw CopyError(path: demuxer.path, reason: "unreadable HEVC configuration (\(error))")
            }
            let framing = NALUnitFraming.lengthPrefixed(lengthSize: record.nalUnitLengthSize)
            if record.hasParameterSets { return (framing, record.forFourByteLengthSamples) }
            // An `hev1` record may leave every parameter set to the samples.
            return (framing, try inBandConfiguration(framing: framing, streamIndex: streamIndex, demuxer: demuxer,
                                                     readAhead: &readAhead))
        }
        if let configuration = try? HEVCDecoderConfiguration(annexB: stream.extradata) {
            return (.annexB, configuration)
        }
        return (.annexB, try inBandConfiguration(framing: .annexB, streamIndex: streamIndex, demuxer: demuxer,
                                                  readAhead: &readAhead))
    }

    /// The parameter sets in front of the first keyframe that carries them.
    private static func inBandConfiguration(
        framing: NALUnitFraming, streamIndex: Int, demuxer: FileDemuxer, readAhead: inout [DemuxedPacket]
    ) throws -> HEVCDecoderConfiguration {
        func configuration(_ packet: DemuxedPacket) -> HEVCDecoderConfiguration? {
            (try? framing.nalUnits(in: packet.data)).flatMap { try? HEVCDecoderConfiguration(parameterSetsIn: $0) }
        }
        guard let packet = try readUntil(streamIndex: streamIndex, demuxer: demuxer, readAhead: &readAhead,
                                         where: { configuration($0) != nil }),
              let found = configuration(packet) else {
            throw CopyError(path: demuxer.path, reason: "no HEVC parameter sets (VPS/SPS/PPS) found; "
                + "the video cannot be decoded")
        }
        return found
    }

    /// Size, pixel aspect ratio and colour description from the SPS; the container's display matrix (a
    /// phone's rotation) for `tkhd`, and its sample aspect ratio when it states one.
    static func hevcFormat(_ stream: InputStreamInfo, configuration: HEVCDecoderConfiguration,
                           path: String) throws -> HEVCFormat {
        var format: HEVCFormat
        do {
            format = try HEVCFormat(decoderConfiguration: configuration, matrix: stream.displayMatrix)
        } catch {
            throw CopyError(path: path, reason: "unreadable HEVC sequence parameter set (\(error))")
        }
        if let aspect = stream.sampleAspectRatio, aspect.numerator > 0, aspect.denominator > 0 {
            format.displayWidth = Int(HLSKit.rescale(Int64(format.width), multipliedBy: Int64(aspect.numerator),
                                                     dividedBy: Int64(aspect.denominator)))
        }
        return format
    }
}
