/// The general part of profile_tier_level() (H.265 7.3.3): what `hvcC` repeats in its header and the
/// RFC 6381 CODECS value is made of.
public struct HEVCProfileTierLevel: Sendable, Equatable {
    /// general_profile_space (0…3); 0 in every published profile.
    public var profileSpace: UInt8
    /// general_tier_flag: Main (false) or High tier.
    public var isHighTier: Bool
    /// general_profile_idc: 1 Main, 2 Main 10, 3 Main Still Picture, 4 range extensions.
    public var profileIDC: UInt8
    /// general_profile_compatibility_flag[0…31], flag j in bit 31 − j (stream order).
    public var compatibilityFlags: UInt32
    /// The 48 bits from general_progressive_source_flag to general_inbld_flag/reserved bit, in stream order.
    public var constraintIndicatorFlags: UInt64
    /// general_level_idc: 30 times the level number (93 is level 3.1).
    public var levelIDC: UInt8

    static let constraintIndicatorBits = 48
    static let constraintIndicatorByteCount = constraintIndicatorBits / 8

    public init(profileSpace: UInt8, isHighTier: Bool, profileIDC: UInt8, compatibilityFlags: UInt32,
                constraintIndicatorFlags: UInt64, levelIDC: UInt8) {
        self.profileSpace = profileSpace
        self.isHighTier = isHighTier
        self.profileIDC = profileIDC
        self.compatibilityFlags = compatibilityFlags
        self.constraintIndicatorFlags = constraintIndicatorFlags
        self.levelIDC = levelIDC
    }

    /// The six constraint indicator bytes, first byte first.
    public var constraintIndicatorBytes: [UInt8] {
        (0..<Self.constraintIndicatorByteCount).map { index in
            UInt8(truncatingIfNeeded: constraintIndicatorFlags >> (8 * (Self.constraintIndicatorByteCount - 1 - index)))
        }
    }

    /// The CODECS value for an `hvc1` sample entry (ISO/IEC 14496-15 E.3, used by RFC 6381):
    /// `hvc1.` profile space (none, A, B, C) and profile_idc, the compatibility flags in reverse bit order
    /// as hex, L or H with level_idc, then each constraint byte as hex with trailing zero bytes left out.
    /// Main profile, level 3.1, progressive and frame-only: `hvc1.1.6.L93.B0`.
    public func codecsString(sampleEntry: String = "hvc1") -> String {
        let spaces = ["", "A", "B", "C"]
        var fields = [sampleEntry, spaces[Int(profileSpace & 0b11)] + String(profileIDC),
                      String(compatibilityFlags.bitReversed, radix: 16, uppercase: true),
                      (isHighTier ? "H" : "L") + String(levelIDC)]
        var constraints = constraintIndicatorBytes
        while constraints.last == 0 {
            constraints.removeLast()
        }
        fields += constraints.map { String($0, radix: 16, uppercase: true) }
        return fields.joined(separator: ".")
    }

    /// Reads profile_tier_level(1, maxSubLayersMinus1), keeping the general fields and skipping the
    /// sub-layers'.
    init(reading reader: inout BitReader, maxSubLayersMinus1: Int) throws {
        profileSpace = UInt8(try reader.readBits(2))
        isHighTier = try reader.readFlag()
        profileIDC = UInt8(try reader.readBits(5))
        compatibilityFlags = try reader.readBits(32)
        constraintIndicatorFlags = UInt64(try reader.readBits(16)) << 32 | UInt64(try reader.readBits(32))
        levelIDC = UInt8(try reader.readBits(8))
        var profilePresent: [Bool] = []
        var levelPresent: [Bool] = []
        for _ in 0..<maxSubLayersMinus1 {
            profilePresent.append(try reader.readFlag())
            levelPresent.append(try reader.readFlag())
        }
        if maxSubLayersMinus1 > 0 {
            // reserved_zero_2bits for slots maxSubLayersMinus1…7, so the flags fill 16 bits.
            try reader.skipBits(2 * (Self.maxSubLayers - maxSubLayersMinus1))
        }
        for index in 0..<maxSubLayersMinus1 {
            if profilePresent[index] { try reader.skipBits(Self.subLayerProfileBits) }
            if levelPresent[index] { try reader.skipBits(Self.subLayerLevelBits) }
        }
    }

    /// sps_max_sub_layers_minus1 is at most 6: seven sub-layers, and 2-bit flag slots for eight.
    static let maxSubLayers = 8
    /// Profile space, tier, profile_idc, 32 compatibility flags, 48 constraint bits.
    private static let subLayerProfileBits = 2 + 1 + 5 + 32 + 48
    private static let subLayerLevelBits = 8
}

private extension UInt32 {
    /// The bits in the opposite order: flag j of the compatibility field becomes bit j.
    var bitReversed: UInt32 {
        (0..<32).reduce(0) { reversed, bit in reversed | ((self >> bit) & 1) << (31 - bit) }
    }
}
