import Foundation
import HLSCrypto
import Testing

@Suite struct CryptoTests {
    @Test func digestsMatchTheirStandardVectors() {
        #expect(Digest.hex(Digest.sha256(Data("abc".utf8)))
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        // RFC 4231, test case 2.
        #expect(Digest.hex(Digest.hmacSHA256(key: Data("Jefe".utf8), message: Data("what do ya want for nothing?".utf8)))
                == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    /// Equal secrets of any length compare equal; one differing byte, a prefix or an extension does not.
    @Test func constantTimeEqualityIsEqualityOfTheBytes() {
        let secret = Array("s3cret-stream-key".utf8)
        #expect(Digest.constantTimeEqual(secret, Array("s3cret-stream-key".utf8)))
        #expect(Digest.constantTimeEqual([UInt8](), [UInt8]()))
        var changed = secret
        changed[changed.count - 1] ^= 1
        #expect(!Digest.constantTimeEqual(secret, changed))
        #expect(!Digest.constantTimeEqual(secret, Array(secret.dropLast())))
        #expect(!Digest.constantTimeEqual(secret, secret + [0]))
        #expect(!Digest.constantTimeEqual(secret, [UInt8]()))
    }

    /// NIST SP 800-38A F.2.1, CBC-AES128.Encrypt, first block (PKCS#7 then adds a block of padding).
    @Test func cbcWithPKCS7Padding() {
        let plain = Self.bytes(hex: "6bc1bee22e409f96e93d7e117393172a")
        let sealed = AES128.encrypt(plain, key: Self.key, iv: Self.iv)
        #expect(sealed.count == 32)
        #expect(Digest.hex(Array(sealed.prefix(16))) == "7649abac8119b246cee98e9b12e9197d")
        #expect(AES128.decrypt(sealed, key: Self.key, iv: Self.iv) == plain)
        #expect(AES128.decrypt(sealed, key: Array(Self.key.reversed()), iv: Self.iv) != plain)
    }

    /// SAMPLE-AES's cipher: CBC without padding over whole blocks in place, the same ciphertext as the
    /// padded one up to the padding (NIST SP 800-38A F.2.1, two blocks).
    @Test func sampleAESEncryptsWholeBlocksInPlaceWithoutPadding() {
        let plain = Self.bytes(hex: "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51")
        var bytes = [0xAA] + plain + [0xBB]
        AES128.BlockCipher(key: Self.key).encrypt(&bytes, range: 1..<33, iv: Self.iv)
        #expect(Digest.hex(Array(bytes[1..<33])) == "7649abac8119b246cee98e9b12e9197d5086cb9b507219ee95db113a917678b2")
        #expect(bytes.first == 0xAA && bytes.last == 0xBB)
    }

    @Test func randomBytesDiffer() {
        let first = SecureRandom.bytes(16), second = SecureRandom.bytes(16)
        #expect(first.count == 16 && first != second)
    }

    static let key = bytes(hex: "2b7e151628aed2a6abf7158809cf4f3c")
    static let iv = Array(0..<16).map { UInt8($0) }

    static func bytes(hex: String) -> [UInt8] {
        let digits = Array(hex.utf8)
        return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)! }
    }
}
