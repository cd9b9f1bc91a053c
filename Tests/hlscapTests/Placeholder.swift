import Testing
@Test func placeholder_hlscapTests() { #expect(Bool(true)) }
