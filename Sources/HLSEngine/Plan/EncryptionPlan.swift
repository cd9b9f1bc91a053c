import HLSOutput

/// The encryption the user asked for, option by option: nil is "not given".
public struct EncryptionRequest: Sendable, Equatable {
    public var method: SegmentEncryption.Method?
    /// A new key every this many segments; 0 keeps one for the run.
    public var rotation: Int?
    public var keyDirectory: String?
    /// What EXT-X-KEY URIs begin with.
    public var keyURIPrefix: String?
    /// Upload the keys with the stream.
    public var publishKeys = false

    public init() {}
}

/// How a stream is encrypted and where its keys are kept, decided from an `EncryptionRequest` and where the
/// stream goes.
public struct EncryptionPlan: Sendable, Equatable {
    public var method: SegmentEncryption.Method
    public var keyDirectory: String
    public var rotation: Int
    public var keyURIPrefix: String?
    public var publishKeys: Bool

    /// nil without a method; its companions are then refused.
    init?(_ request: EncryptionRequest, outputDirectory: String?, publishing: Bool) throws(PlanError) {
        guard let method = request.method else {
            if request.rotation != nil || request.keyDirectory != nil || request.keyURIPrefix != nil || request.publishKeys {
                throw .needsEncryption
            }
            return nil
        }
        if request.publishKeys, !publishing { throw .publishKeysWithoutPublishing }
        self.method = method
        rotation = request.rotation ?? 0
        // cbcs names its key in the init section, so it keeps one key for the run.
        if method == .sampleAES, rotation > 0 { throw .keyRotationWithSampleAES }
        guard let keyDirectory = request.keyDirectory ?? outputDirectory.map(Self.defaultKeyDirectory) else {
            throw .keyDirectoryMissing
        }
        self.keyDirectory = keyDirectory
        if let prefix = request.keyURIPrefix, prefix.isEmpty || prefix.contains(where: { $0 == "\"" || $0.isNewline }) {
            throw .keyURIPrefix(prefix)
        }
        keyURIPrefix = request.keyURIPrefix
        publishKeys = request.publishKeys
    }

    /// `OUT.keys` beside `OUT`.
    public static func defaultKeyDirectory(_ output: String) -> String {
        var trimmed = output
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed.removeLast() }
        return trimmed + ".keys"
    }

    /// The encryption the writer uses: keys in a private directory.
    public func make() throws(StoreError) -> SegmentEncryption {
        let store = try DirectoryStore(root: keyDirectory, isPrivate: true)
        return SegmentEncryption(keyStore: store, rotation: rotation, keyURIPrefix: keyURIPrefix, method: method)
    }
}
