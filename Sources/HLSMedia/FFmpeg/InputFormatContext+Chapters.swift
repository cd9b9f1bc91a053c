import CFFmpeg
import HLSKit

extension InputFormatContext {
    /// Where the container's timeline starts (`start_time`), in microseconds; 0 when it does not say.
    public var startMicroseconds: Int64 {
        let start = pointer.pointee.start_time
        return start == hlscap_nopts_value() ? 0 : start
    }

    /// The start of each chapter (MP4 chapter track, Matroska editions), in microseconds of the
    /// container's timeline, ascending.
    public var chapterStartMicroseconds: [Int64] {
        let count = Int(pointer.pointee.nb_chapters)
        guard count > 0, let chapters = pointer.pointee.chapters else { return [] }
        return (0..<count).compactMap { index in
            guard let chapter = chapters[index]?.pointee else { return nil }
            return av_rescale_q(chapter.start, chapter.time_base, AVRational(num: 1, den: 1_000_000))
        }.sorted()
    }
}
