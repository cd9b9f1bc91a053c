import HLSEngine
import HLSOutput
import Testing

/// `--encrypt` and its companions, for `hlscap live` and `hlscap file` alike.
@Suite struct PlanEncryptionTests {
    static let refusals: [(EncryptionCase, PlanError)] = [
        (EncryptionCase("--key-rotation alone") { $0.rotation = 10 }, .needsEncryption),
        (EncryptionCase("--key-dir alone") { $0.keyDirectory = "/var/keys" }, .needsEncryption),
        (EncryptionCase("--key-url alone") { $0.keyURIPrefix = "https://keys.example/" }, .needsEncryption),
        (EncryptionCase("--publish-keys alone") { $0.publishKeys = true }, .needsEncryption),
        (EncryptionCase("--publish-keys without --publish") { $0.method = .aes128; $0.publishKeys = true },
         .publishKeysWithoutPublishing),
        (EncryptionCase("--key-rotation with cbcs") { $0.method = .sampleAES; $0.rotation = 2 },
         .keyRotationWithSampleAES),
        (EncryptionCase("--key-url empty") { $0.method = .aes128; $0.keyURIPrefix = "" }, .keyURIPrefix("")),
        (EncryptionCase("--key-url with a quote") { $0.method = .aes128; $0.keyURIPrefix = "https://k\"/" },
         .keyURIPrefix("https://k\"/")),
        (EncryptionCase("--key-url with a line break") { $0.method = .aes128; $0.keyURIPrefix = "a\nb" }, .keyURIPrefix("a\nb")),
    ]

    @Test(arguments: refusals)
    func refusal(_ item: EncryptionCase, _ error: PlanError) {
        #expect(throws: error, "live") {
            try LiveCase(item.testDescription) { item.edit(&$0.encryption) }.request.plan()
        }
        #expect(throws: error, "file") {
            try FileCase(item.testDescription) { item.edit(&$0.encryption) }.plan()
        }
    }

    @Test func withoutADirectoryTheKeysNeedOne() throws {
        #expect(throws: PlanError.keyDirectoryMissing) {
            try FileCase("") { $0.outputDirectory = nil; $0.publishing = true; $0.encryption.method = .aes128 }.plan()
        }
        #expect(throws: PlanError.keyDirectoryMissing) {
            try LiveCase("") { $0.outputDirectory = nil; $0.publishing = true; $0.encryption.method = .aes128 }.request.plan()
        }
        let published = try FileCase("") {
            $0.outputDirectory = nil
            $0.publishing = true
            $0.encryption.method = .aes128
            $0.encryption.keyDirectory = "/var/keys"
            $0.encryption.publishKeys = true
        }.plan()
        #expect(published.encryption?.keyDirectory == "/var/keys" && published.encryption?.publishKeys == true)
    }

    @Test func theKeysGoBesideTheStreamUnlessTold() throws {
        let plan = try LiveCase("") { $0.outputDirectory = "/srv/live/"; $0.encryption.method = .aes128 }.request.plan()
        let encryption = try #require(plan.encryption)
        #expect(encryption.keyDirectory == "/srv/live.keys" && encryption.rotation == 0 && encryption.keyURIPrefix == nil)
        #expect(encryption.method == .aes128 && !encryption.publishKeys)
        let told = try #require(try LiveCase("") {
            $0.encryption.method = .aes128
            $0.encryption.rotation = 10
            $0.encryption.keyDirectory = "/var/keys"
            $0.encryption.keyURIPrefix = "https://keys.example/live/"
        }.request.plan().encryption)
        #expect(told.keyDirectory == "/var/keys" && told.rotation == 10 && told.keyURIPrefix == "https://keys.example/live/")
        #expect(try LiveCase("") { _ in }.request.plan().encryption == nil)
        #expect(try FileCase("") { $0.encryption.method = .sampleAES; $0.encryption.rotation = 0 }.plan().encryption?.method
            == .sampleAES)
    }

    @Test(arguments: [("/srv/live", "/srv/live.keys"), ("/srv/live//", "/srv/live.keys"), ("out", "out.keys"), ("/", "/.keys")])
    func defaultKeyDirectory(_ output: String, _ keys: String) {
        #expect(EncryptionPlan.defaultKeyDirectory(output) == keys)
    }
}
