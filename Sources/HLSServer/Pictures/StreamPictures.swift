import Foundation
import Glibc
import HLSBase
import HLSKit

/// Makes a JPEG of a segment's first picture from the init section's bytes and the segment's,
/// `width` pixels wide when given (else at the stream's size). The server knows no codec: whoever
/// runs it supplies the media layer's.
public typealias PictureMaker = @Sendable (_ initSection: [UInt8], _ segment: [UInt8], _ width: Int?) throws -> [UInt8]

/// `/snapshot.jpg`, the latest keyframe of the stream, and the pictures of the recordings' thumbnails:
/// made by a `PictureMaker` on demand and kept, so that a picture is made once per segment or fragment.
public final class StreamPictures: Sendable {
    public static let snapshotPath = "/snapshot.jpg"
    /// Thumbnails of the recordings are this wide; their height keeps the picture's shape.
    public static let thumbnailWidth = 320
    /// Thumbnails kept: a timeline page of a few hours at one a minute.
    static let thumbnailCapacity = 256

    private let maker: PictureMaker
    /// The picture of the newest segment, keyed by it.
    private let snapshot = Locked<(key: String, jpeg: [UInt8])?>(nil)
    private let thumbnails = Locked(PictureCache(capacity: thumbnailCapacity))

    public init(maker: @escaping PictureMaker) {
        self.maker = maker
    }

    /// A picture made anew (`made`) or taken from the cache.
    struct Picture {
        var jpeg: [UInt8]
        var key: String
        var made: Bool
    }

    /// The picture of the segment `key` names: the last one kept when it is that segment's, else made
    /// from the bytes `read` returns.
    func snapshot(key: String, read: () throws -> (initSection: [UInt8], segment: [UInt8])) throws -> Picture {
        if let kept = snapshot.withLock({ $0 }), kept.key == key { return Picture(jpeg: kept.jpeg, key: key, made: false) }
        let (initSection, segment) = try read()
        let jpeg = try maker(initSection, segment, nil)
        snapshot.withLock { $0 = (key, jpeg) }
        return Picture(jpeg: jpeg, key: key, made: true)
    }

    /// A thumbnail of the fragment `key` names, kept among the last `thumbnailCapacity` made.
    func thumbnail(key: String, read: () throws -> (initSection: [UInt8], segment: [UInt8])) throws -> Picture {
        if let kept = thumbnails.withLock({ $0.picture(key) }) { return Picture(jpeg: kept, key: key, made: false) }
        let (initSection, segment) = try read()
        let jpeg = try maker(initSection, segment, Self.thumbnailWidth)
        thumbnails.withLock { $0.keep(jpeg, key: key) }
        return Picture(jpeg: jpeg, key: key, made: true)
    }

    /// A JPEG answer: revalidated on every request (a newer segment makes a newer picture), tagged by
    /// what it was made from.
    static func response(_ picture: Picture, request: HTTPRequest) -> HTTPResponse {
        let tag = "\"" + String(fingerprint(picture.key), radix: 16) + "\""
        let headers: [(name: String, value: String)] = [("Content-Type", "image/jpeg"), ("Cache-Control", "no-cache"),
                                                        ("ETag", tag)] + ServerHeaders.cors
        if let match = request.header("If-None-Match"),
           match.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == tag }) {
            return HTTPResponse(status: 304, headers: headers)
        }
        return HTTPResponse(status: 200, headers: headers, body: .bytes(picture.jpeg))
    }

    /// FNV-1a, 64 bits: a short stable tag for a key.
    static func fingerprint(_ key: String) -> UInt64 {
        key.utf8.reduce(0xcbf2_9ce4_8422_2325 as UInt64) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
    }

    /// `length` bytes of the file at `path` from `offset` (the rest of the file without a length).
    static func read(_ path: String, offset: Int = 0, length: Int? = nil) throws -> [UInt8] {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw PictureProblem(status: 404, "\(path) cannot be read") }
        defer { try? handle.close() }
        do {
            try handle.seek(toOffset: UInt64(offset))
            let data = try length.map { try handle.read(upToCount: $0) } ?? handle.readToEnd()
            guard let data, length.map({ data.count == $0 }) ?? true else {
                throw PictureProblem(status: 404, "\(path) is shorter than its playlist says")
            }
            return Array(data)
        } catch let problem as PictureProblem {
            throw problem
        } catch {
            throw PictureProblem(status: 404, "\(path) cannot be read: \(error.localizedDescription)")
        }
    }
}

/// Why no picture is answered: the status and a one-line reason.
struct PictureProblem: Error {
    var status: Int
    var message: String

    init(status: Int, _ message: String) {
        self.status = status
        self.message = message
    }

    var response: HTTPResponse { .text(status, message, headers: ServerHeaders.noStore) }
}

/// The last `capacity` pictures by key; the one kept longest goes first.
struct PictureCache {
    let capacity: Int
    private var pictures: [String: [UInt8]] = [:]
    private var order: [String] = []

    init(capacity: Int) {
        self.capacity = capacity
    }

    func picture(_ key: String) -> [UInt8]? { pictures[key] }

    mutating func keep(_ jpeg: [UInt8], key: String) {
        if pictures.updateValue(jpeg, forKey: key) == nil { order.append(key) }
        while order.count > capacity { pictures[order.removeFirst()] = nil }
    }
}
