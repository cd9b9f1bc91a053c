import CFFmpeg
import Foundation
import HLSKit

/// Writes each picture's capture time into it: a libavfilter graph `buffer → drawtext → buffersink`,
/// made again when the pictures change size or pixel format (a camera that came back otherwise).
///
/// The frame's pts enters the graph as its capture time in microseconds since 1970, which drawtext's
/// `%{pts:gmtime}` formats, so the text is when the frame was captured, not when it was drawn on.
public final class TimeOverlayFilter {
    public let overlay: TimeOverlay

    private var graph: UnsafeMutablePointer<AVFilterGraph>?
    private var source: UnsafeMutablePointer<AVFilterContext>?
    private var sink: UnsafeMutablePointer<AVFilterContext>?
    /// What the graph was made for: width, height and pixel format of its pictures.
    private var input: (width: Int32, height: Int32, format: Int32)?

    /// The graph's clock: microseconds, so a capture time since 1970 fits its pts exactly.
    private static let timeBase = AVRational(num: 1, den: 1_000_000)

    private let library: FilterLibrary

    public init(overlay: TimeOverlay) throws(TimeOverlayError) {
        self.overlay = overlay
        library = try FilterLibrary.load()
    }

    deinit { library.graphFree(&graph) }

    /// Throws unless libavfilter loads and can draw text.
    static func checkDrawtext() throws(TimeOverlayError) {
        guard try FilterLibrary.load().getByName("drawtext") != nil else {
            throw .filterUnavailable("this FFmpeg's libavfilter has no drawtext filter (it was built without "
                + "libfreetype); install the distribution's libavfilter")
        }
    }

    /// `frame`'s picture with `date` written into it; `frame` gives its picture up to the graph (it is
    /// left empty). The picture returned keeps `frame`'s pts and time base.
    public func draw(on frame: Frame, capturedAt date: Date) throws -> Frame {
        let picture = frame.pointer.pointee
        if input == nil || input! != (picture.width, picture.height, picture.format) {
            try makeGraph(for: frame)
        }
        let pts = frame.pts
        let timeBase = frame.timeBase
        frame.pts = Int64((date.timeIntervalSince1970 * 1_000_000).rounded(.down))
        try FFmpegError.check(library.addFrame(source, frame.pointer, 0))
        let output = try Frame(timeBase: timeBase)
        // drawtext hands on each picture as it comes: one in, one out.
        try FFmpegError.check(library.getFrame(sink, output.pointer))
        output.pts = pts
        return output
    }

    private func makeGraph(for frame: Frame) throws {
        library.graphFree(&graph)
        input = nil
        guard let graph = library.graphAlloc() else { throw FFmpegError.outOfMemory }
        self.graph = graph
        // drawtext draws in the caller's thread; no slice threads for a filter that cannot use them.
        graph.pointee.nb_threads = 1
        let aspect = frame.pointer.pointee.sample_aspect_ratio
        let pixelAspect = aspect.num > 0 && aspect.den > 0 ? aspect : AVRational(num: 1, den: 1)
        let sourceArguments = "video_size=\(frame.width)x\(frame.height):pix_fmt=\(frame.pointer.pointee.format)"
            + ":time_base=\(Self.timeBase.num)/\(Self.timeBase.den)"
            + ":pixel_aspect=\(pixelAspect.num)/\(pixelAspect.den)"
        var source: UnsafeMutablePointer<AVFilterContext>?
        try FFmpegError.check(library.graphCreateFilter(&source, library.getByName("buffer"), "in",
                                                           sourceArguments, nil, graph))
        var sink: UnsafeMutablePointer<AVFilterContext>?
        try FFmpegError.check(library.graphCreateFilter(&sink, library.getByName("buffersink"), "out",
                                                           nil, nil, graph))
        let text = try makeDrawtext(in: graph, pictureHeight: frame.height)
        try FFmpegError.check(library.link(source, 0, text, 0))
        try FFmpegError.check(library.link(text, 0, sink, 0))
        try FFmpegError.check(library.graphConfig(graph, nil))
        self.source = source
        self.sink = sink
        input = (frame.pointer.pointee.width, frame.pointer.pointee.height, frame.pointer.pointee.format)
    }

    /// drawtext with its options set one by one, so the text reaches it as it is, without the
    /// filter-graph and option-string escaping a description would need.
    private func makeDrawtext(in graph: UnsafeMutablePointer<AVFilterGraph>, pictureHeight: Int) throws
        -> UnsafeMutablePointer<AVFilterContext> {
        try Self.checkDrawtext()
        guard let text = library.graphAllocFilter(graph, library.getByName("drawtext"), "time") else {
            throw FFmpegError.outOfMemory
        }
        let fontPixels = TimeOverlay.fontPixels(pictureHeight: pictureHeight)
        let margin = fontPixels / 2
        let options: [(String, String)] = [
            ("fontfile", overlay.fontPath),
            ("text", overlay.drawtextText),
            ("expansion", "normal"),
            ("fontsize", String(fontPixels)),
            ("fontcolor", "white"),
            ("box", "1"),
            ("boxcolor", "black@0.5"),
            ("boxborderw", String(max(1, fontPixels / 4))),
            ("x", String(margin)),
            ("y", String(margin)),
        ]
        for (name, value) in options {
            try FFmpegError.check(av_opt_set(UnsafeMutableRawPointer(text), name, value, AV_OPT_SEARCH_CHILDREN))
        }
        try FFmpegError.check(library.initString(text, nil))
        return text
    }
}
