/// An H.264 level with the limits of ITU-T H.264 Table A-1 that an encoder's settings must fit.
public struct H264Level: Sendable, Equatable, CustomStringConvertible {
    /// level_idc: ten times the level number (31 for 3.1).
    public let idc: Int
    /// Macroblocks per second.
    let maxMacroblocksPerSecond: Int
    /// Macroblocks per frame.
    let maxFrameSizeMacroblocks: Int
    /// Maximum bit rate in 1000 bit/s for Baseline/Main (the Table A-1 unit).
    let maxBitrateKilobits: Int
    /// Maximum coded picture buffer size in 1000 bits for Baseline/Main.
    let maxBufferKilobits: Int

    public var description: String { "\(idc / 10).\(idc % 10)" }

    /// Level 1b (a special case of level_idc 11 or 9) is left out: no setting needs it.
    public static let all: [H264Level] = [
        H264Level(idc: 10, maxMacroblocksPerSecond: 1_485, maxFrameSizeMacroblocks: 99, maxBitrateKilobits: 64, maxBufferKilobits: 175),
        H264Level(idc: 11, maxMacroblocksPerSecond: 3_000, maxFrameSizeMacroblocks: 396, maxBitrateKilobits: 192, maxBufferKilobits: 500),
        H264Level(idc: 12, maxMacroblocksPerSecond: 6_000, maxFrameSizeMacroblocks: 396, maxBitrateKilobits: 384, maxBufferKilobits: 1_000),
        H264Level(idc: 13, maxMacroblocksPerSecond: 11_880, maxFrameSizeMacroblocks: 396, maxBitrateKilobits: 768, maxBufferKilobits: 2_000),
        H264Level(idc: 20, maxMacroblocksPerSecond: 11_880, maxFrameSizeMacroblocks: 396, maxBitrateKilobits: 2_000, maxBufferKilobits: 2_000),
        H264Level(idc: 21, maxMacroblocksPerSecond: 19_800, maxFrameSizeMacroblocks: 792, maxBitrateKilobits: 4_000, maxBufferKilobits: 4_000),
        H264Level(idc: 22, maxMacroblocksPerSecond: 20_250, maxFrameSizeMacroblocks: 1_620, maxBitrateKilobits: 4_000, maxBufferKilobits: 4_000),
        H264Level(idc: 30, maxMacroblocksPerSecond: 40_500, maxFrameSizeMacroblocks: 1_620, maxBitrateKilobits: 10_000, maxBufferKilobits: 10_000),
        H264Level(idc: 31, maxMacroblocksPerSecond: 108_000, maxFrameSizeMacroblocks: 3_600, maxBitrateKilobits: 14_000, maxBufferKilobits: 14_000),
        H264Level(idc: 32, maxMacroblocksPerSecond: 216_000, maxFrameSizeMacroblocks: 5_120, maxBitrateKilobits: 20_000, maxBufferKilobits: 20_000),
        H264Level(idc: 40, maxMacroblocksPerSecond: 245_760, maxFrameSizeMacroblocks: 8_192, maxBitrateKilobits: 20_000, maxBufferKilobits: 25_000),
        H264Level(idc: 41, maxMacroblocksPerSecond: 245_760, maxFrameSizeMacroblocks: 8_192, maxBitrateKilobits: 50_000, maxBufferKilobits: 62_500),
        H264Level(idc: 42, maxMacroblocksPerSecond: 522_240, maxFrameSizeMacroblocks: 8_704, maxBitrateKilobits: 50_000, maxBufferKilobits: 62_500),
        H264Level(idc: 50, maxMacroblocksPerSecond: 589_824, maxFrameSizeMacroblocks: 22_080, maxBitrateKilobits: 135_000, maxBufferKilobits: 135_000),
        H264Level(idc: 51, maxMacroblocksPerSecond: 983_040, maxFrameSizeMacroblocks: 36_864, maxBitrateKilobits: 240_000, maxBufferKilobits: 240_000),
        H264Level(idc: 52, maxMacroblocksPerSecond: 2_073_600, maxFrameSizeMacroblocks: 36_864, maxBitrateKilobits: 240_000, maxBufferKilobits: 240_000),
        H264Level(idc: 60, maxMacroblocksPerSecond: 4_177_920, maxFrameSizeMacroblocks: 139_264, maxBitrateKilobits: 240_000, maxBufferKilobits: 240_000),
        H264Level(idc: 61, maxMacroblocksPerSecond: 8_355_840, maxFrameSizeMacroblocks: 139_264, maxBitrateKilobits: 480_000, maxBufferKilobits: 480_000),
        H264Level(idc: 62, maxMacroblocksPerSecond: 16_711_680, maxFrameSizeMacroblocks: 139_264, maxBitrateKilobits: 800_000, maxBufferKilobits: 800_000),
    ]

    private static let macroblockSize = 16
    /// High profile allows 1.25 times the Table A-1 bit rate and buffer (cpbBrVclFactor 1250
    /// against 1000, Table A-2).
    private static let highProfileFactorNumerator = 5
    private static let highProfileFactorDenominator = 4
    /// A.3.1: neither side may exceed sqrt(8 · MaxFS) macroblocks.
    private static let sideLimitFactor = 8

    /// The lowest level whose frame size, macroblock rate, bit rate and buffer size all fit a
    /// High profile stream of `width`×`height` at `frameRate` with a peak of `maxBitrate` bit/s
    /// and a `bufferSize`-bit VBV buffer; `nil` when even the highest level is too small.
    public static func lowest(width: Int, height: Int, frameRate: Rational, maxBitrate: Int,
                              bufferSize: Int) -> H264Level? {
        let widthMacroblocks = (width + macroblockSize - 1) / macroblockSize
        let heightMacroblocks = (height + macroblockSize - 1) / macroblockSize
        let frameMacroblocks = widthMacroblocks * heightMacroblocks
        return all.first { level in
            let side = level.maxFrameSizeMacroblocks * sideLimitFactor
            return frameMacroblocks <= level.maxFrameSizeMacroblocks
                && widthMacroblocks * widthMacroblocks <= side
                && heightMacroblocks * heightMacroblocks <= side
                // MBs/frame × num/den ≤ MaxMBPS, without division.
                && frameMacroblocks * Int(frameRate.numerator) <= level.maxMacroblocksPerSecond * Int(frameRate.denominator)
                && maxBitrate * highProfileFactorDenominator
                    <= level.maxBitrateKilobits * 1000 * highProfileFactorNumerator
                && bufferSize * highProfileFactorDenominator
                    <= level.maxBufferKilobits * 1000 * highProfileFactorNumerator
        }
    }
}
