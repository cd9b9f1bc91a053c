import Foundation

/// The pictures and sound of the built-in test source, as pure functions of the frame or
/// sample index, so that what a stream shows at any instant is known exactly.
///
/// Video: colour bars scrolling left, a black box bouncing across them, and the frame number
/// and stream time written in; at every whole second one fully white frame. Audio: a 440 Hz
/// tone, replaced by a 1 kHz beep for the first 50 ms of every whole second, so the white frame
/// and the beep start at the same instant and A/V offset can be measured in the output.
struct TestPattern {
    let width: Int
    let height: Int
    let framesPerSecond: Int
    let sampleRate: Int
    let channelCount: Int

    static let toneHertz = 440.0
    static let beepHertz = 1000.0
    static let beepMilliseconds = 50
    // Well below the beep, so the beep's onset stands out of the tone in the decoded output.
    static let toneAmplitude = 0.1
    static let beepAmplitude = 0.5

    /// Limited-range BT.601 levels.
    static let white: (y: UInt8, u: UInt8, v: UInt8) = (235, 128, 128)
    static let black: (y: UInt8, u: UInt8, v: UInt8) = (16, 128, 128)
    /// 75 % colour bars: white, yellow, cyan, green, magenta, red, blue.
    static let bars: [(y: UInt8, u: UInt8, v: UInt8)] = [
        (180, 128, 128), (162, 44, 142), (131, 156, 44), (112, 72, 58),
        (84, 184, 198), (65, 100, 212), (35, 212, 114),
    ]
    static let barScrollPixelsPerFrame = 4
    static let boxStepPixelsPerFrame = 6

    func isWhiteFrame(_ index: Int64) -> Bool { index % Int64(framesPerSecond) == 0 }

    func isBeepSample(_ index: Int64) -> Bool {
        index % Int64(sampleRate) < Int64(sampleRate * Self.beepMilliseconds / 1000)
    }

    /// Frame `index` is at `index / framesPerSecond` s of stream time.
    func frameTimeMicroseconds(_ index: Int64) -> Int64 { index * 1_000_000 / Int64(framesPerSecond) }

    func sampleTimeMicroseconds(_ index: Int64) -> Int64 { index * 1_000_000 / Int64(sampleRate) }

    // MARK: Video

    /// Draws frame `index` into a yuv420p `frame` of `width`×`height`.
    func draw(frame index: Int64, into frame: Frame) {
        let (y, yStride) = frame.plane(0)
        let (u, uStride) = frame.plane(1)
        let (v, vStride) = frame.plane(2)
        let chromaWidth = width / 2, chromaHeight = height / 2
        if isWhiteFrame(index) {
            fill(y, stride: yStride, rows: 0..<height, columns: 0..<width, with: Self.white.y)
            fill(u, stride: uStride, rows: 0..<chromaHeight, columns: 0..<chromaWidth, with: Self.white.u)
            fill(v, stride: vStride, rows: 0..<chromaHeight, columns: 0..<chromaWidth, with: Self.white.v)
            return
        }
        drawBars(frame: index, y: (y, yStride), u: (u, uStride), v: (v, vStride))

        // The box bounces between the edges along a triangle wave, on even coordinates so its
        // chroma covers exactly the same area.
        let side = max(2, height / 6) & ~1
        let travelX = max(1, width - side), travelY = max(1, height - side)
        let step = Int(index) * Self.boxStepPixelsPerFrame
        let boxX = bounce(step, travelX) & ~1, boxY = bounce(step / 2, travelY) & ~1
        fill(y, stride: yStride, rows: boxY..<(boxY + side), columns: boxX..<(boxX + side), with: Self.black.y)
        fill(u, stride: uStride, rows: (boxY / 2)..<((boxY + side) / 2), columns: (boxX / 2)..<((boxX + side) / 2),
             with: Self.black.u)
        fill(v, stride: vStride, rows: (boxY / 2)..<((boxY + side) / 2), columns: (boxX / 2)..<((boxX + side) / 2),
             with: Self.black.v)

        drawCaption(frame: index, y: (y, yStride), u: (u, uStride), v: (v, vStride))
    }

    private typealias Plane = (base: UnsafeMutablePointer<UInt8>, bytesPerRow: Int)

    private func drawBars(frame index: Int64, y: Plane, u: Plane, v: Plane) {
        let barWidth = max(1, width / Self.bars.count)
        let period = Int64(barWidth * Self.bars.count)
        let offset = Int(index * Int64(Self.barScrollPixelsPerFrame) % period)
        var rowY = [UInt8](repeating: 0, count: width)
        var rowU = [UInt8](repeating: 0, count: width / 2)
        var rowV = [UInt8](repeating: 0, count: width / 2)
        for x in 0..<width {
            let bar = Self.bars[((x + offset) / barWidth) % Self.bars.count]
            rowY[x] = bar.y
            if x % 2 == 0 {
                rowU[x / 2] = bar.u
                rowV[x / 2] = bar.v
            }
        }
        copy(rowY, into: y, rows: height)
        copy(rowU, into: u, rows: height / 2)
        copy(rowV, into: v, rows: height / 2)
    }

    /// "frame number  HH:MM:SS.mmm" in white on a black strip at the top left.
    private func drawCaption(frame index: Int64, y: Plane, u: Plane, v: Plane) {
        let milliseconds = frameTimeMicroseconds(index) / 1000
        let clock = String(format: "%02lld:%02lld:%02lld.%03lld", milliseconds / 3_600_000,
                           milliseconds / 60_000 % 60, milliseconds / 1000 % 60, milliseconds % 1000)
        let text = String(format: "%06lld ", index) + clock
        let scale = max(1, height / 120)
        let margin = 2 * scale
        let stripWidth = min(width, PixelFont.textWidth(characterCount: text.count, scale: scale) + 2 * margin) & ~1
        let stripHeight = min(height, PixelFont.glyphHeight * scale + 2 * margin + 1) & ~1
        fill(y.base, stride: y.bytesPerRow, rows: 0..<stripHeight, columns: 0..<stripWidth, with: Self.black.y)
        fill(u.base, stride: u.bytesPerRow, rows: 0..<(stripHeight / 2), columns: 0..<(stripWidth / 2), with: Self.black.u)
        fill(v.base, stride: v.bytesPerRow, rows: 0..<(stripHeight / 2), columns: 0..<(stripWidth / 2), with: Self.black.v)
        PixelFont.draw(text, into: y.base, stride: y.bytesPerRow, width: width, height: height,
                       x: margin, y: margin, scale: scale, foreground: Self.white.y)
    }

    private func bounce(_ position: Int, _ travel: Int) -> Int {
        let phase = position % (2 * travel)
        return phase < travel ? phase : 2 * travel - phase
    }

    private func fill(_ plane: UnsafeMutablePointer<UInt8>, stride: Int, rows: Range<Int>, columns: Range<Int>,
                      with value: UInt8) {
        guard !columns.isEmpty else { return }
        for row in rows {
            memset(plane + row * stride + columns.lowerBound, Int32(value), columns.count)
        }
    }

    private func copy(_ row: [UInt8], into plane: Plane, rows: Int) {
        row.withUnsafeBufferPointer { source in
            for index in 0..<rows {
                memcpy(plane.base + index * plane.bytesPerRow, source.baseAddress!, source.count)
            }
        }
    }

    // MARK: Audio

    /// Writes samples `first ..< first + count` as interleaved signed 16-bit, the same value on every channel.
    func fillAudio(from first: Int64, count: Int, into samples: UnsafeMutablePointer<Int16>) {
        for offset in 0..<count {
            let index = first + Int64(offset)
            let beep = isBeepSample(index)
            let hertz = beep ? Self.beepHertz : Self.toneHertz
            let amplitude = beep ? Self.beepAmplitude : Self.toneAmplitude
            // Both tones have whole cycles per second, so the phase can restart every second and
            // stays exact however long the stream runs.
            let position = Double(index % Int64(sampleRate)) / Double(sampleRate)
            let value = Int16(amplitude * Double(Int16.max) * sin(2 * Double.pi * hertz * position))
            for channel in 0..<channelCount {
                samples[offset * channelCount + channel] = value
            }
        }
    }
}
