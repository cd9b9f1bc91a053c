/// Writes bits MSB-first, with Exp-Golomb codes, into an RBSP: for parameter sets no encoder writes.
struct BitWriter {
    private var bits: [UInt8] = []

    mutating func write(_ value: UInt64, _ count: Int) {
        for index in stride(from: count - 1, through: 0, by: -1) {
            bits.append(UInt8(value >> UInt64(index) & 1))
        }
    }

    /// ue(v) (H.264 9.1, HEVC 9.2).
    mutating func writeUE(_ value: UInt32) {
        let code = UInt64(value) + 1
        let length = 64 - code.leadingZeroBitCount
        write(0, length - 1)
        write(code, length)
    }

    /// The bits, a stop bit and zeros to the byte boundary, with emulation prevention bytes (0x03
    /// after two zeros that a byte up to 3 follows).
    var escapedRBSP: [UInt8] {
        var all = bits + [1]
        while all.count % 8 != 0 { all.append(0) }
        var out: [UInt8] = []
        var zeros = 0
        for start in stride(from: 0, to: all.count, by: 8) {
            let byte = all[start..<start + 8].reduce(0) { $0 << 1 | $1 }
            if zeros >= 2 && byte <= 3 {
                out.append(3)
                zeros = 0
            }
            out.append(byte)
            zeros = byte == 0 ? zeros + 1 : 0
        }
        return out
    }
}
