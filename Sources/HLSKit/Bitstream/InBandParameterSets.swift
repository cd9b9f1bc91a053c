/// The parameter sets a video track's samples carry themselves, judged against its sample entry.
///
/// A player configures its decoder from the init section. A parameter set in a sample that a
/// decoder refuses (an SPS that does not parse, as FFmpeg drops one whose id or aspect ratio is out
/// of range), or one that changes the picture the sample entry describes without the discontinuity
/// and new init section RFC 8216bis 4.4.4.3 asks for, leaves a stream that does not decode. Copying
/// checks the samples it copies with this; the validator the samples it reads.
public struct InBandParameterSets: Sendable {
    /// What a sequence parameter set fixes about the pictures; two SPSs of one id may be written
    /// differently (another VUI) and still agree on it.
    struct Picture: Equatable {
        var profile: UInt8
        var chromaFormat: UInt32
        var bitDepthLuma: Int
        var width: Int
        var height: Int
    }

    private enum Codec { case h264, hevc }

    private let codec: Codec
    /// The pictures of the SPSs in force, by id: the sample entry's, then those the samples brought.
    private var pictures: [UInt32: Picture] = [:]
    /// What is wrong with the first SPS of the sample entry (avcC, hvcC) that a decoder drops, as a
    /// sentence; nil when it drops none. Every picture that refers to such an SPS is lost, as with one
    /// in the samples.
    public private(set) var sampleEntryProblem: String?

    public init(_ configuration: AVCDecoderConfiguration) {
        codec = .h264
        for unit in configuration.sequenceParameterSets {
            do {
                let sps = try H264SequenceParameterSet(parsing: unit)
                pictures[sps.sequenceParameterSetID] = Self.picture(sps)
            } catch {
                noteSampleEntryProblem(error, record: "avcC")
            }
        }
    }

    public init(_ configuration: HEVCDecoderConfiguration) {
        codec = .hevc
        for array in configuration.arrays where array.type == HEVCNALUnitType.sequenceParameterSet.rawValue {
            for unit in array.nalUnits {
                do {
                    let sps = try HEVCSequenceParameterSet(parsing: unit)
                    pictures[sps.sequenceParameterSetID] = Self.picture(sps)
                } catch {
                    noteSampleEntryProblem(error, record: "hvcC")
                }
            }
        }
    }

    private mutating func noteSampleEntryProblem(_ error: any Error, record: String) {
        guard sampleEntryProblem == nil else { return }
        sampleEntryProblem = "an \(codecName) sequence parameter set in the sample entry (\(record)) cannot be read (\(error))"
    }

    private var codecName: String { codec == .h264 ? "H.264" : "HEVC" }

    /// Checks the NAL units of one sample, in order; returns what is wrong with the first parameter set
    /// that breaks the stream, as a sentence, or nil.
    public mutating func check(_ nalUnits: [ArraySlice<UInt8>]) -> String? {
        for unit in nalUnits {
            guard let header = unit.first else { continue }
            let picture: (id: UInt32, picture: Picture)
            do {
                switch codec {
                case .h264 where H264NALUnitType(headerByte: header) == .sequenceParameterSet:
                    let sps = try H264SequenceParameterSet(parsing: unit)
                    picture = (sps.sequenceParameterSetID, Self.picture(sps))
                case .h264 where H264NALUnitType(headerByte: header) == .pictureParameterSet:
                    if let problem = checkPictureParameterSet(unit) { return problem }
                    continue
                case .hevc where HEVCNALUnitType(headerByte: header) == .sequenceParameterSet:
                    let sps = try HEVCSequenceParameterSet(parsing: unit)
                    picture = (sps.sequenceParameterSetID, Self.picture(sps))
                default:
                    continue
                }
            } catch {
                return "an \(codecName) sequence parameter set in the samples cannot be read (\(error))"
            }
            if let problem = accept(picture.id, picture.picture) { return problem }
        }
        return nil
    }

    private mutating func accept(_ id: UInt32, _ picture: Picture) -> String? {
        if let known = pictures[id], known != picture {
            return "sequence parameter set \(id) changes in the samples from \(known.width)x\(known.height) "
                + "(profile \(known.profile)) to \(picture.width)x\(picture.height) (profile \(picture.profile)), "
                + "which the init section does not describe"
        }
        pictures[id] = picture
        return nil
    }

    /// A PPS names the SPS its pictures use; one the decoder never received leaves them undecodable.
    private func checkPictureParameterSet(_ unit: ArraySlice<UInt8>) -> String? {
        var reader = BitReader(H264NALUnit.removingEmulationPrevention(unit.dropFirst()), structure: "H.264 PPS")
        do {
            _ = try reader.readUE()  // pic_parameter_set_id
            let spsID = try reader.readUE()
            guard pictures[spsID] != nil else {
                return "an H.264 picture parameter set in the samples refers to sequence parameter set \(spsID), "
                    + "which neither the init section nor the samples carry"
            }
        } catch {
            return "an H.264 picture parameter set in the samples cannot be read (\(error))"
        }
        return nil
    }

    private static func picture(_ sps: H264SequenceParameterSet) -> Picture {
        Picture(profile: sps.profileIndication, chromaFormat: sps.chromaFormat, bitDepthLuma: sps.bitDepthLuma,
                width: sps.width, height: sps.height)
    }

    private static func picture(_ sps: HEVCSequenceParameterSet) -> Picture {
        Picture(profile: sps.profileTierLevel.profileIDC, chromaFormat: sps.chromaFormat,
                bitDepthLuma: sps.bitDepthLuma, width: sps.width, height: sps.height)
    }
}
