/// A 5×7 pixel font for the characters of a frame counter and a clock.
enum PixelFont {
    static let glyphWidth = 5
    static let glyphHeight = 7

    /// Each glyph is 7 rows, top first; bit 4 of a row is its leftmost pixel.
    private static let glyphs: [Character: [UInt8]] = [
        "0": [0x0E, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0E],
        "1": [0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E],
        "2": [0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F],
        "3": [0x1F, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0E],
        "4": [0x02, 0x06, 0x0A, 0x12, 0x1F, 0x02, 0x02],
        "5": [0x1F, 0x10, 0x1E, 0x01, 0x01, 0x11, 0x0E],
        "6": [0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E],
        "7": [0x1F, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08],
        "8": [0x0E, 0x11, 0x11, 0x0E, 0x11, 0x11, 0x0E],
        "9": [0x0E, 0x11, 0x11, 0x0F, 0x01, 0x02, 0x0C],
        ":": [0x00, 0x0C, 0x0C, 0x00, 0x0C, 0x0C, 0x00],
        ".": [0x00, 0x00, 0x00, 0x00, 0x00, 0x0C, 0x0C],
        " ": [0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00],
    ]

    /// Whether the pixel at (`column`, `row`) of `character`'s glyph is set; characters
    /// without a glyph are blank.
    static func isSet(_ character: Character, column: Int, row: Int) -> Bool {
        guard let rows = glyphs[character] else { return false }
        return rows[row] & (0x10 >> UInt8(column)) != 0
    }

    /// Draws `text` into a luma plane with its top-left corner at (`x`, `y`), each font pixel
    /// a `scale`×`scale` square of `foreground`, one blank column between characters;
    /// pixels outside `width`×`height` are clipped.
    static func draw(_ text: String, into plane: UnsafeMutablePointer<UInt8>, stride: Int, width: Int, height: Int,
                     x: Int, y: Int, scale: Int, foreground: UInt8) {
        for (position, character) in text.enumerated() {
            let left = x + position * (glyphWidth + 1) * scale
            for row in 0..<glyphHeight {
                for column in 0..<glyphWidth where isSet(character, column: column, row: row) {
                    for dy in 0..<scale {
                        let py = y + row * scale + dy
                        guard py >= 0, py < height else { continue }
                        for dx in 0..<scale {
                            let px = left + column * scale + dx
                            guard px >= 0, px < width else { continue }
                            plane[py * stride + px] = foreground
                        }
                    }
                }
            }
        }
    }

    /// The width in pixels `draw` uses for `characterCount` characters.
    static func textWidth(characterCount: Int, scale: Int) -> Int {
        characterCount == 0 ? 0 : (characterCount * (glyphWidth + 1) - 1) * scale
    }
}
