import HLSMedia
import HLSServer

extension StreamPictures {
    /// Pictures made by the media layer: libavcodec decodes the keyframe, its mjpeg encoder writes the JPEG.
    static func decodedByFFmpeg() -> StreamPictures {
        StreamPictures { initSection, segment, width in
            try KeyframePicture.jpeg(initSection: initSection, segment: segment, width: width)
        }
    }
}
