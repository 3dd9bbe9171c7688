import Crypto
@testable import PushgateWebPush
import Testing

/// The key derivation's own HMAC-SHA-256 against RFC 4231's vectors and swift-crypto's `HMAC<SHA256>`.
@Suite("HMAC-SHA-256")
struct HMACSHA256Tests {
    @Test func rfc4231Vectors() throws {
        // Test case 2: a key shorter than the block.
        let short = HMACSHA256(key: Array("Jefe".utf8)).authenticationCode(Array("what do ya want ".utf8), Array("for nothing?".utf8))
        #expect(Array(short).hex == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        // Test case 6: a 131-byte key, hashed first.
        let long = HMACSHA256(key: [UInt8](repeating: 0xaa, count: 131))
            .authenticationCode(Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8))
        #expect(Array(long).hex == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
    }

    @Test func agreesWithSwiftCryptoForEveryKeyLengthAndSplit() {
        var generator = SystemRandomNumberGenerator()
        for keyLength in [0, 1, 16, 32, 63, 64, 65, 100] {
            let key = (0..<keyLength).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let hmac = HMACSHA256(key: key)
            for messageLength in [0, 1, 55, 56, 64, 130] {
                let message = (0..<messageLength).map { _ in UInt8.random(in: 0...255, using: &generator) }
                let expected = Array(HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: key)))
                let split = messageLength / 3
                // The same prepared key serves several codes (the PRK's key and nonce).
                #expect(Array(hmac.authenticationCode(message)) == expected)
                #expect(Array(hmac.authenticationCode(Array(message[..<split]), [], Array(message[split...]))) == expected)
            }
        }
    }
}
