import HLSKit

/// Which H.264 parameter sets a copied stream starts from, when they travel in-band (MPEG-TS).
///
/// A decoder such as ffmpeg's skips a damaged SPS and starts decoding at the next keyframe that
/// repeats a good one; a copy that kept the damaged set in its `avcC` would decode nothing. So the
/// copy starts from the first parameter sets whose SPS parses completely and declares a picture
/// that can be decoded, and the frames in front of them are left out, as a decoder would lose them.
enum H264ParameterSetChoice {
    /// The parameter sets in an Annex-B sample or extradata when they can start a copy; nil when
    /// there are none, or the SPS is damaged or declares an impossible picture.
    static func usableConfiguration(annexB bytes: [UInt8]) -> AVCDecoderConfiguration? {
        guard let configuration = parsedConfiguration(annexB: bytes) else { return nil }
        let sps: H264SequenceParameterSet
        do {
            sps = try configuration.parsedSequenceParameterSet()
        } catch {
            return nil  // a damaged SPS: the caller looks further
        }
        return pictureSizeProblem(width: sps.width, height: sps.height) == nil ? configuration : nil
    }

    /// The parameter sets in an Annex-B sample or extradata, damaged or not; nil when there are none.
    static func parsedConfiguration(annexB bytes: [UInt8]) -> AVCDecoderConfiguration? {
        do {
            return try AVCDecoderConfiguration(annexB: bytes)
        } catch {
            return nil  // not every sample carries parameter sets
        }
    }

    /// Why pictures of this size cannot be copied, as the transcoding path would refuse them too.
    static func pictureSizeProblem(width: Int, height: Int) -> String? {
        let sides = 1...OutputSize.maxSide
        guard !sides.contains(width) || !sides.contains(height) else { return nil }
        return "the video is \(width)x\(height); hlscap takes pictures up to \(OutputSize.maxSide) pixels a side"
    }
}
