import CFFmpeg
import HLSKit

/// Pictures of one size whose buffers are drawn into again once everything handed out from them
/// has been released, so a source neither allocates nor has the kernel zero a new picture for
/// every frame, and memory does not fragment between the capture and writing threads.
final class PicturePool {
    let width: Int
    let height: Int
    /// Pictures the pool keeps; when all of them are still in use, a new one is made and not kept.
    let capacity: Int

    private var pictures: [Frame] = []

    init(width: Int, height: Int, capacity: Int) {
        self.width = width
        self.height = height
        self.capacity = capacity
    }

    /// A yuv420p picture nobody else holds, as a new reference: its content is what was last drawn
    /// into it, so the caller draws every pixel.
    func picture(timeBase: Rational) throws -> Frame {
        if let free = pictures.first(where: { av_frame_is_writable($0.pointer) != 0 }) {
            let picture = try free.newReference()
            picture.timeBase = timeBase
            return picture
        }
        let picture = try Frame.yuv420p(width: width, height: height, timeBase: timeBase)
        guard pictures.count < capacity else { return picture }
        pictures.append(picture)
        return try picture.newReference()
    }
}
