/// Common Encryption of samples with the 'cbcs' scheme (ISO/IEC 23001-7 10.4), what HLS calls
/// SAMPLE-AES for fragmented MP4 (RFC 8216bis 5.1) and FairPlay-ready pipelines use:
///
///     video   each slice NAL unit: its length field, its header and the first bytes of the slice
///             (`clearSliceBytes`, which hold the slice header) clear; of the rest, one 16-byte block
///             in ten encrypted (pattern 1:9), the CBC chain running through the encrypted blocks of
///             one NAL unit from the constant IV; a last partial block stays clear. Other NAL units
///             (parameter sets, SEI, delimiters) stay clear.
///     audio   every whole 16-byte block of a sample encrypted (CBC from the constant IV); the last
///             partial block stays clear.
///
/// Sizes never change, so a fragment's layout is the clear one's; `senc` (with `saiz` and `saio`
/// pointing at it) carries each video sample's clear and protected byte counts. The IV is constant,
/// in `tenc`, so no sample carries one.
public enum SampleEncryption {
    /// Encrypts `bytes[range]` in place with AES-128-CBC from `iv`, without padding: `range` is a
    /// whole number of blocks. Given by a crypto library; HLSKit does no cryptography of its own.
    public typealias BlockCipher = (_ bytes: inout [UInt8], _ range: Range<Int>, _ iv: [UInt8]) -> Void

    public static let blockSize = 16
    /// Pattern encryption of video: one block encrypted, nine skipped.
    public static let videoCryptBlocks: UInt8 = 1
    public static let videoSkipBlocks: UInt8 = 9
    /// Bytes after the NAL unit header left clear: more than the slice headers hlscap's encoders and
    /// cameras write, as Apple's SAMPLE-AES leaves the first 32 bytes of a NAL unit clear.
    public static let clearSliceBytes = 31

    /// One run of a sample: clear bytes, then protected ones (`senc`'s subsample entry).
    public struct Subsample: Sendable, Equatable {
        public var clearBytes: UInt16
        public var protectedBytes: UInt32

        public init(clearBytes: UInt16, protectedBytes: UInt32) {
            self.clearBytes = clearBytes
            self.protectedBytes = protectedBytes
        }
    }

    /// The key a track is encrypted with, as `tenc` names it.
    public struct TrackKey: Sendable, Equatable {
        public var keyID: [UInt8]
        public var constantIV: [UInt8]

        public init(keyID: [UInt8], constantIV: [UInt8]) {
            precondition(keyID.count == 16 && constantIV.count == blockSize, "a KID and an IV are 16 bytes")
            self.keyID = keyID
            self.constantIV = constantIV
        }
    }

    /// How a track's samples are encrypted.
    public enum TrackKind: Sendable, Equatable {
        case video(nalLengthSize: Int, isHEVC: Bool)
        case audio

        public init(_ description: TrackDescription) {
            switch description.format {
            case .h264(let format): self = .video(nalLengthSize: format.decoderConfiguration.nalUnitLengthSize, isHEVC: false)
            case .hevc(let format): self = .video(nalLengthSize: format.decoderConfiguration.nalUnitLengthSize, isHEVC: true)
            case .aac: self = .audio
            }
        }
    }

    /// The clear and protected runs of a video sample of length-prefixed NAL units.
    public static func subsamples(of sample: [UInt8], nalLengthSize: Int, isHEVC: Bool) -> [Subsample] {
        var runs: [(clear: Int, protected: Int)] = []
        var clear = 0
        var position = 0
        while position < sample.count {
            guard position + nalLengthSize < sample.count else {
                clear += sample.count - position
                break
            }
            var length = 0
            for index in 0..<nalLengthSize { length = length << 8 | Int(sample[position + index]) }
            let unitLength = min(nalLengthSize + length, sample.count - position)
            let header = sample[position + nalLengthSize]
            let isSlice = isHEVC ? (header >> 1) & 0x3F < 32 : (1...5).contains(header & 0x1F)
            let headerBytes = isHEVC ? 2 : 1
            let clearPart = nalLengthSize + headerBytes + clearSliceBytes
            if isSlice, unitLength - clearPart >= blockSize {
                runs.append((clear + clearPart, unitLength - clearPart))
                clear = 0
            } else {
                clear += unitLength
            }
            position += unitLength
        }
        if clear > 0 || runs.isEmpty { runs.append((clear, 0)) }
        // A clear run longer than 16 bits goes in entries of its own with nothing protected.
        var subsamples: [Subsample] = []
        for (clear, protected) in runs {
            var remaining = clear
            while remaining > Int(UInt16.max) {
                subsamples.append(Subsample(clearBytes: UInt16.max, protectedBytes: 0))
                remaining -= Int(UInt16.max)
            }
            subsamples.append(Subsample(clearBytes: UInt16(remaining), protectedBytes: UInt32(protected)))
        }
        return subsamples
    }

    /// Encrypts one sample in place; returns its subsamples (none for audio).
    public static func encrypt(_ sample: inout [UInt8], kind: TrackKind, iv: [UInt8], cipher: BlockCipher) -> [Subsample] {
        switch kind {
        case .audio:
            let whole = sample.count / blockSize * blockSize
            if whole > 0 { cipher(&sample, 0..<whole, iv) }
            return []
        case .video(let nalLengthSize, let isHEVC):
            let subsamples = subsamples(of: sample, nalLengthSize: nalLengthSize, isHEVC: isHEVC)
            var position = 0
            for subsample in subsamples {
                position += Int(subsample.clearBytes)
                let end = position + Int(subsample.protectedBytes)
                var chain = iv
                var block = position
                while block + blockSize <= end {
                    cipher(&sample, block..<(block + blockSize), chain)
                    chain = Array(sample[block..<(block + blockSize)])
                    block += blockSize * Int(videoCryptBlocks + videoSkipBlocks)
                }
                position = end
            }
            return subsamples
        }
    }

    /// Encrypts every sample of a fragment's tracks in place; returns each track's subsamples, by
    /// track ID, for `MediaFragment.make`.
    public static func encrypt(_ tracks: inout [FragmentTrack], descriptions: [TrackDescription], iv: [UInt8],
                               cipher: BlockCipher) -> [UInt32: [[Subsample]]] {
        var auxiliary: [UInt32: [[Subsample]]] = [:]
        for index in tracks.indices {
            guard let description = descriptions.first(where: { $0.trackID == tracks[index].trackID }) else { continue }
            let kind = TrackKind(description)
            auxiliary[tracks[index].trackID] = tracks[index].samples.indices.map { sample in
                encrypt(&tracks[index].samples[sample].data, kind: kind, iv: iv, cipher: cipher)
            }
        }
        return auxiliary
    }
}
