import CFFmpeg
import Foundation
import HLSKit

/// Which of libavcodec's encoders makes the pictures: libx264/libx265 in software, or the machine's
/// hardware through VAAPI (Intel and AMD GPUs), V4L2 memory-to-memory (a Raspberry Pi 4's encoder)
/// or NVENC (NVIDIA GPUs).
public enum VideoEncoderKind: String, Sendable, Equatable, CaseIterable {
    case software, vaapi, v4l2m2m, nvenc

    /// The hardware kinds `--encoder auto` tries, in this order, before software.
    public static let hardware: [VideoEncoderKind] = [.vaapi, .v4l2m2m, .nvenc]

    /// The VAAPI render node.
    public static let vaapiDevice = "/dev/dri/renderD128"
    /// The library NVENC needs at run time, which only NVIDIA's driver installs.
    static let nvencLibrary = "libcuda.so.1"

    /// libavcodec's name of the encoder of this kind for `codec`.
    public func encoderName(for codec: VideoCodec) -> String {
        switch (self, codec) {
        case (.software, .h264): "libx264"
        case (.software, .hevc): "libx265"
        case (_, .h264): "h264_\(rawValue)"
        case (_, .hevc): "hevc_\(rawValue)"
        }
    }

    /// The name `--encoder` takes.
    public func optionName(for codec: VideoCodec) -> String {
        self == .software ? (codec == .h264 ? "x264" : "x265") : rawValue
    }

    /// Why this kind cannot encode on this machine, from what it needs that is missing (the device
    /// node, the driver's library), without opening an encoder; nil when nothing is missing.
    public func missingRequirement() -> String? {
        let manager = FileManager.default
        switch self {
        case .software:
            return nil
        case .vaapi:
            return manager.fileExists(atPath: Self.vaapiDevice) ? nil
                : "\(Self.vaapiDevice) does not exist: no GPU with a VAAPI driver is visible here"
        case .v4l2m2m:
            let nodes = ((try? manager.contentsOfDirectory(atPath: "/dev")) ?? []).filter { $0.hasPrefix("video") }
            return nodes.isEmpty ? "no /dev/video* device, so no V4L2 memory-to-memory encoder (a Raspberry Pi's "
                + "is /dev/video11)" : nil
        case .nvenc:
            guard let handle = dlopen(Self.nvencLibrary, RTLD_NOW) else {
                return "\(Self.nvencLibrary) cannot be loaded: NVIDIA's driver is not installed"
            }
            dlclose(handle)
            return nil
        }
    }
}

/// Pictures uploaded to a VAAPI device for its encoder: the device opened once, a pool of NV12 surfaces,
/// each yuv420p picture converted to NV12 in memory and copied into a surface.
final class VAAPIUpload {
    private var device: UnsafeMutablePointer<AVBufferRef>?
    private var pool: UnsafeMutablePointer<AVBufferRef>?
    private var converter: OpaquePointer?
    private let staging: Frame

    init(devicePath: String, width: Int, height: Int) throws {
        try FFmpegError.check(av_hwdevice_ctx_create(&device, AV_HWDEVICE_TYPE_VAAPI, devicePath, nil, 0))
        guard let pool = av_hwframe_ctx_alloc(device) else { throw FFmpegError.outOfMemory }
        self.pool = pool
        let frames = UnsafeMutableRawPointer(pool.pointee.data).assumingMemoryBound(to: AVHWFramesContext.self)
        frames.pointee.format = AV_PIX_FMT_VAAPI
        frames.pointee.sw_format = AV_PIX_FMT_NV12
        frames.pointee.width = Int32(width)
        frames.pointee.height = Int32(height)
        frames.pointee.initial_pool_size = 20
        try FFmpegError.check(av_hwframe_ctx_init(pool))
        staging = try Frame.video(width: width, height: height, pixelFormat: AV_PIX_FMT_NV12, timeBase: Rational(1, 90_000))
    }

    deinit {
        sws_freeContext(converter)
        av_buffer_unref(&pool)
        av_buffer_unref(&device)
    }

    /// Hands the encoder context the surface pool; it encodes `AV_PIX_FMT_VAAPI` frames.
    func attach(to context: UnsafeMutablePointer<AVCodecContext>) {
        context.pointee.pix_fmt = AV_PIX_FMT_VAAPI
        context.pointee.hw_frames_ctx = av_buffer_ref(pool)
    }

    /// A surface holding `frame`'s picture, with its time and picture type.
    func upload(_ frame: Frame) throws -> Frame {
        converter = sws_getCachedContext(converter, Int32(frame.width), Int32(frame.height), frame.pixelFormat,
                                         Int32(staging.width), Int32(staging.height), AV_PIX_FMT_NV12,
                                         SWS_BILINEAR, nil, nil, nil)
        guard let converter else { throw CodecError.unexpectedFrame("libswscale cannot make NV12 for VAAPI") }
        let source = frame.pointer.pointee
        let target = staging.pointer.pointee
        withUnsafePointer(to: source.data) { sourceData in
            withUnsafePointer(to: source.linesize) { sourceStrides in
                withUnsafePointer(to: target.data) { targetData in
                    withUnsafePointer(to: target.linesize) { targetStrides in
                        let count = Int(AV_NUM_DATA_POINTERS)
                        sourceData.withMemoryRebound(to: UnsafePointer<UInt8>?.self, capacity: count) { planes in
                            sourceStrides.withMemoryRebound(to: Int32.self, capacity: count) { strides in
                                targetData.withMemoryRebound(to: UnsafeMutablePointer<UInt8>?.self, capacity: count) { outputs in
                                    targetStrides.withMemoryRebound(to: Int32.self, capacity: count) { outputStrides in
                                        _ = sws_scale(converter, planes, strides, 0, Int32(frame.height), outputs, outputStrides)
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        let surface = try Frame(timeBase: frame.timeBase)
        try FFmpegError.check(av_hwframe_get_buffer(pool, surface.pointer, 0))
        try FFmpegError.check(av_hwframe_transfer_data(surface.pointer, staging.pointer, 0))
        surface.pts = frame.pts
        surface.pointer.pointee.pict_type = frame.pointer.pointee.pict_type
        return surface
    }
}

extension VideoEncoderKind {
    /// The first of `candidates` that opens an encoder of `settings` on this machine, with why each one
    /// before it could not; nil when none could.
    public static func firstWorking(_ candidates: [VideoEncoderKind], settings: VideoEncoderSettings)
        -> (kind: VideoEncoderKind?, refusals: [(kind: VideoEncoderKind, reason: String)]) {
        var refusals: [(kind: VideoEncoderKind, reason: String)] = []
        for kind in candidates {
            if let missing = kind.missingRequirement() {
                refusals.append((kind, missing))
                continue
            }
            var probe = settings
            probe.kind = kind
            do {
                _ = try VideoEncoder(settings: probe, trackIndex: 0)
                return (kind, refusals)
            } catch {
                refusals.append((kind, "\(kind.encoderName(for: settings.codec)) did not open (\(error))"))
            }
        }
        return (nil, refusals)
    }
}
