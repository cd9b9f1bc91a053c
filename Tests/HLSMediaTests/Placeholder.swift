import Testing
@Test func placeholder_HLSMediaTests() { #expect(Bool(true)) }
