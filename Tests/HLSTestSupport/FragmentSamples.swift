import HLSKit

/// Reading samples back out of a media segment (styp, moof, mdat).
public enum FragmentSamples {
    /// The samples of one track, cut from the file by the trun data offset and sizes.
    /// Handles tfhd default-base-is-moof; other base modes are not used by HLSKit.
    public static func samples(in segment: [UInt8], trackID: UInt32) throws -> [[UInt8]] {
        let boxes = try MP4Box.parse(segment)
        guard let moof = boxes.first("moof") else { throw MP4ReadError.missingBox("moof") }
        for traf in moof.all("traf") {
            guard let tfhd = traf.first("tfhd"), try tfhd.trackFragmentTrackID() == trackID else { continue }
            guard tfhd.flags & 0x02_0000 != 0 else {
                throw MP4ReadError.unexpected(box: "tfhd", detail: "data offsets not relative to the moof")
            }
            guard let trun = try traf.first("trun")?.trackRun() else { throw MP4ReadError.missingBox("traf/trun") }
            var position = moof.offset + Int(trun.dataOffset ?? 0)
            var samples: [[UInt8]] = []
            for entry in trun.entries {
                guard let size = entry.size.map(Int.init) else {
                    throw MP4ReadError.unexpected(box: "trun", detail: "no per-sample sizes")
                }
                guard position >= 0, position + size <= segment.count else {
                    throw MP4ReadError.unexpected(box: "trun", detail: "sample outside the file")
                }
                samples.append(Array(segment[position..<position + size]))
                position += size
            }
            return samples
        }
        throw MP4ReadError.missingBox("moof/traf for track \(trackID)")
    }

    /// The NAL unit types (low 5 bits of each header byte) in a sample with 4-byte lengths.
    public static func nalUnitTypes(inSample sample: [UInt8]) throws -> [UInt8] {
        var reader = MP4Reader(sample[...], box: "length-prefixed sample")
        var types: [UInt8] = []
        while reader.remaining > 0 {
            let length = Int(try reader.uint32())
            let unit = try reader.take(length)
            guard let header = unit.first else {
                throw MP4ReadError.unexpected(box: "mdat", detail: "empty NAL unit")
            }
            types.append(header & 0x1F)
        }
        return types
    }

    /// Whether a video sample holds an IDR slice (NAL unit type 5).
    public static func containsIDR(_ sample: [UInt8]) throws -> Bool {
        try nalUnitTypes(inSample: sample).contains(5)
    }

    /// The HEVC NAL unit types (bits 1 to 6 of each two-byte header) in a sample with 4-byte lengths.
    public static func hevcNALUnitTypes(inSample sample: [UInt8]) throws -> [UInt8] {
        var reader = MP4Reader(sample[...], box: "length-prefixed sample")
        var types: [UInt8] = []
        while reader.remaining > 0 {
            let unit = try reader.take(Int(try reader.uint32()))
            guard let header = unit.first else { throw MP4ReadError.unexpected(box: "mdat", detail: "empty NAL unit") }
            types.append((header >> 1) & 0x3F)
        }
        return types
    }

    /// Whether an HEVC sample is an IRAP picture (BLA, IDR or CRA: NAL unit types 16 to 23).
    public static func containsHEVCRandomAccessPoint(_ sample: [UInt8]) throws -> Bool {
        try hevcNALUnitTypes(inSample: sample).contains { (16...23).contains($0) }
    }
}
