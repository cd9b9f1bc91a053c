import Testing
@Test func placeholder_HLSKitTests() { #expect(Bool(true)) }
