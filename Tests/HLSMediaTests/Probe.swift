import Foundation

/// A packet as ffprobe reads it: an independent account to compare the demuxer with.
struct ProbedPacket: Decodable, Equatable {
    var streamIndex: Int
    var pts: Int64?
    var dts: Int64?
    var duration: Int64?
    var size: Int
    var isKeyframe: Bool
    var isDiscard: Bool
    /// "adler32:xxxxxxxx" of the packet bytes.
    var dataHash: String

    private enum CodingKeys: String, CodingKey {
        case streamIndex = "stream_index", pts, dts, duration, size, flags, dataHash = "data_hash"
    }

    init(streamIndex: Int, pts: Int64?, dts: Int64?, duration: Int64?, size: Int, isKeyframe: Bool,
         isDiscard: Bool, dataHash: String) {
        self.streamIndex = streamIndex
        self.pts = pts
        self.dts = dts
        self.duration = duration
        self.size = size
        self.isKeyframe = isKeyframe
        self.isDiscard = isDiscard
        self.dataHash = dataHash
    }

    init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        streamIndex = try container.decode(Int.self, forKey: .streamIndex)
        pts = try container.decodeIfPresent(Int64.self, forKey: .pts)
        dts = try container.decodeIfPresent(Int64.self, forKey: .dts)
        duration = try container.decodeIfPresent(Int64.self, forKey: .duration)
        // ffprobe writes the size as a string.
        size = Int(try container.decode(String.self, forKey: .size)) ?? -1
        let flags = try container.decode(String.self, forKey: .flags)
        isKeyframe = flags.contains("K")
        isDiscard = flags.contains("D")
        dataHash = try container.decode(String.self, forKey: .dataHash)
    }

    static func read(_ path: String) throws -> [ProbedPacket] {
        struct Report: Decodable { var packets: [ProbedPacket] }
        let json = try run("/usr/bin/ffprobe", [
            "-v", "error", "-show_data_hash", "adler32", "-of", "json",
            "-show_entries", "packet=stream_index,pts,dts,duration,size,flags,data_hash", path,
        ])
        return try JSONDecoder().decode(Report.self, from: json).packets
    }
}

/// The number of packets of each stream ffprobe counts, keyed by stream index.
func probedPacketCounts(_ path: String) throws -> [Int: Int] {
    struct Stream: Decodable { var index: Int; var nb_read_packets: String }
    struct Report: Decodable { var streams: [Stream] }
    let json = try run("/usr/bin/ffprobe", [
        "-v", "error", "-count_packets", "-of", "json", "-show_entries", "stream=index,nb_read_packets", path,
    ])
    let streams = try JSONDecoder().decode(Report.self, from: json).streams
    return Dictionary(uniqueKeysWithValues: streams.map { ($0.index, Int($0.nb_read_packets) ?? -1) })
}

/// Adler-32 as ffprobe's `-show_data_hash adler32` prints it.
func adler32Hash(_ bytes: [UInt8]) -> String {
    let modulus: UInt32 = 65521
    var low: UInt32 = 1
    var high: UInt32 = 0
    for byte in bytes {
        low = (low + UInt32(byte)) % modulus
        high = (high + low) % modulus
    }
    return "adler32:" + String(format: "%08x", high << 16 | low)
}
