import Foundation
import HLSBase
import HLSKit
import HLSMedia
import HLSOutput
import Testing
@testable import HLSEngine

/// An encoder that gives its parameter sets only in-band, with its first keyframe, as a Raspberry Pi's
/// V4L2 encoder does: libx264 configured the same way, through the engine's encoder seam.
@Suite(.serialized) struct LiveEngineInBandTests {
    @Test func parameterSetsGivenOnlyInBandMakeACorrectInitSection() throws {
        var run = EngineRun(seconds: 4)
        let made = Locked<[VideoEncoderSettings]>([])
        run.configuration.makeVideoEncoder = { settings, trackIndex in
            var inBand = settings
            inBand.parameterSetsInBand = true
            made.withLock { $0.append(inBand) }
            return try VideoEncoder(settings: inBand, trackIndex: trackIndex)
        }
        let outcome = try run.makeEngine().run()
        #expect(outcome.failure == nil)
        #expect(made.withLock { $0.count } == 1 && made.withLock { $0[0].parameterSetsInBand })
        #expect(try run.validationErrors() == [])
        let playlist = try run.playlist()
        #expect(playlist.endList && playlist.segments.count == 4, "\(playlist.render())")
        // The init section's avcC holds the parameter sets the keyframes carried; they are taken out of
        // the samples, as with an encoder that gives them apart.
        let initSection = try run.store.read(StreamLayout.initName)
        let inBandEncoder = try VideoEncoder(settings: made.withLock { $0[0] }, trackIndex: 0)
        var apart = made.withLock { $0[0] }
        apart.parameterSetsInBand = false
        let apartEncoder = try VideoEncoder(settings: apart, trackIndex: 0)
        #expect(inBandEncoder.trackFormat == apartEncoder.trackFormat)
        guard case .h264(let format) = inBandEncoder.trackFormat else { Issue.record("not H.264"); return }
        let sps = try #require(format.decoderConfiguration.sequenceParameterSets.first)
        #expect(Self.contains(initSection, sps), "the init section holds the SPS")
        let segment = try run.store.read(try #require(playlist.segments.first?.uri))
        #expect(!Self.contains(segment, sps), "the samples do not repeat it")
    }

    private static func contains(_ bytes: [UInt8], _ needle: [UInt8]) -> Bool {
        guard needle.count <= bytes.count else { return false }
        return (0...(bytes.count - needle.count)).contains { bytes[$0..<($0 + needle.count)].elementsEqual(needle) }
    }
}
