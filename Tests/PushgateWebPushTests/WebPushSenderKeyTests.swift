import Crypto
import Foundation
@testable import PushgateWebPush
import Testing

/// The ephemeral sender keys made from random scalars.
@Suite("Web Push sender keys")
struct WebPushSenderKeyTests {
    /// A random number generator that gives the listed values in turn, then `fallback` forever, and counts its draws.
    struct ScriptedGenerator: RandomNumberGenerator {
        var values: [UInt64]
        var fallback: UInt64 = 0
        var draws = 0

        mutating func next() -> UInt64 {
            defer { self.draws += 1 }
            return self.draws < self.values.count ? self.values[self.draws] : self.fallback
        }
    }

    @Test func everyKeyIsNewAndConsistent() throws {
        let keys = (0..<32).map { _ in WebPushSenderKey.generate() }
        #expect(Set(keys.map(\.rawRepresentation)).count == keys.count)
        for key in keys {
            // The public point is the one the scalar gives.
            let rebuilt = try P256.KeyAgreement.PrivateKey(rawRepresentation: key.rawRepresentation)
            #expect(rebuilt.publicKey.x963Representation == key.publicKey.x963Representation)
        }
    }

    @Test func thirtyTwoRandomBytesAreTheScalar() {
        var generator = ScriptedGenerator(values: [0x0102_0304_0506_0708, 0x1112_1314_1516_1718, 0x2122_2324_2526_2728, 0x3132_3334_3536_3738])
        let key = WebPushSenderKey.generate(using: &generator)
        #expect(generator.draws == 4)
        var expected = [UInt8](repeating: 0, count: 32)
        expected.withUnsafeMutableBytes { bytes in
            for (index, value) in generator.values.enumerated() { bytes.storeBytes(of: value, toByteOffset: index * 8, as: UInt64.self) }
        }
        #expect(Array(key.rawRepresentation) == expected)
    }

    /// Zero and values not below the group order are not scalars: new bytes are drawn.
    @Test func invalidScalarsAreDrawnAgain() {
        let zero: [UInt64] = [0, 0, 0, 0]
        let beyondOrder: [UInt64] = [.max, .max, .max, .max]
        let valid: [UInt64] = [0x0101_0101_0101_0101, 0x0101_0101_0101_0101, 0x0101_0101_0101_0101, 0x0101_0101_0101_0101]
        var generator = ScriptedGenerator(values: zero + beyondOrder + valid)
        let key = WebPushSenderKey.generate(using: &generator)
        #expect(generator.draws == 12)
        #expect(Array(key.rawRepresentation) == [UInt8](repeating: 0x01, count: 32))
    }

    /// A generator that never gives a valid scalar does not hang the sender: swift-crypto's generator takes over.
    @Test func aBrokenGeneratorStillGivesAKey() {
        var generator = ScriptedGenerator(values: [])
        let key = WebPushSenderKey.generate(using: &generator)
        #expect(generator.draws == WebPushSenderKey.maximumDraws * 4)
        #expect(Array(key.rawRepresentation) != [UInt8](repeating: 0, count: 32))
    }
}
