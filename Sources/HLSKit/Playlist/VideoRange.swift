extension MasterPlaylist {
    /// The VIDEO-RANGE of a variant (RFC 8216bis 4.4.6.2): which transfer function its video needs.
    public enum VideoRange: String, Sendable, Equatable {
        case sdr = "SDR"
        /// SMPTE ST 2084, perceptual quantisation.
        case pq = "PQ"
        /// ARIB STD-B67, hybrid log-gamma.
        case hlg = "HLG"

        /// The range of a picture with this transfer_characteristics: the two HDR transfer functions have
        /// their own values, every other one is SDR.
        public init(transferCharacteristics: UInt8) {
            switch transferCharacteristics {
            case ColourDescription.perceptualQuantizerTransfer: self = .pq
            case ColourDescription.hybridLogGammaTransfer: self = .hlg
            default: self = .sdr
            }
        }
    }
}
