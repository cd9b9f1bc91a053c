import Testing
@testable import HLSServer

@Suite struct HeaderBytesTests {
    @Test(arguments: [("Content-Type", "content-type"), ("etag", "etag"), ("X-2", "x-2"),
                      ("\u{212A}eep-Alive", "keep-alive"), ("Ünicode-Name", "ünicode-name")])
    func namesAreLowerCasedAsLowercasedDoes(name: String, lowered: String) {
        var bytes = Array("before ".utf8)
        HeaderBytes.appendLowercased(name, to: &bytes)
        #expect(bytes == Array(("before " + lowered).utf8))
        #expect(lowered == name.lowercased())
    }

    @Test func namesCompareWithoutCase() {
        #expect(HeaderBytes.name("Content-Length", is: "content-length"))
        #expect(HeaderBytes.name("CONNECTION", is: "connection"))
        #expect(HeaderBytes.name("\u{212A}eep-alive", is: "keep-alive"), "the Kelvin sign lower-cases to k")
        #expect(!HeaderBytes.name("Connection2", is: "connection"))
        #expect(!HeaderBytes.name("Connectio", is: "connection"))
        #expect(!HeaderBytes.name("", is: "date"))
        #expect(!HeaderBytes.name("Content-Type", is: "content-length"))
    }

    @Test(arguments: [0, 7, 10, 200, 304, 99_999, 1_048_576, Int.max, -1, Int.min])
    func numbersAreWrittenAsStringWritesThem(value: Int) {
        var bytes: [UInt8] = []
        HeaderBytes.appendDecimal(value, to: &bytes)
        #expect(bytes == Array(String(value).utf8))
    }
}
