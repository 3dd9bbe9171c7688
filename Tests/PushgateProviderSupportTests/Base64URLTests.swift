import Foundation
import PushgateProviderSupport
import PushgateTestSupport
import Testing

@Suite("Base64url")
struct Base64URLTests {
    /// What the codec did before it decoded bytes itself: Foundation on translated, padded text.
    static func referenceEncode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func referenceDecode(_ text: String) -> [UInt8]? {
        var base64 = text.trimmingCharacters(in: .whitespacesAndNewlines)
            .replacingOccurrences(of: "-", with: "+")
            .replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64).map(Array.init)
    }

    @Test func encodingMatchesFoundationForEveryLength() {
        var generator = SystemRandomNumberGenerator()
        for length in 0..<200 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let encoded = Base64URL.encode(bytes)
            #expect(encoded == Self.referenceEncode(bytes))
            #expect(Base64URL.decode(encoded) == bytes)
        }
        #expect(Base64URL.encode([0xFB, 0xFF]) == "-_8")
    }

    @Test func decodingAcceptsExactlyWhatItAcceptedBefore() async throws {
        let samples = [
            "", "A", "AB", "ABC", "ABCD", "AB==", "AB=", "ABC=", "ABC==", "ABC=====", "A===", "=", "==", "AB=C", " QUJD ", "QUJD\n",
            "\tQUJD", "QU JD", "QUJD ", "-_8", "+/8", "+/8=", "-_-_", "QUJD\u{00A0}", "\u{2003}QUJD", "QUJDé", "Q!JD", "QUJD.", "AB\u{0}",
            "eyJhbGciOiJFUzI1NiJ9", "eyJhbGciOiJFUzI1NiJ9==", "MEUCIQ",
        ]
        for sample in samples {
            #expect(Base64URL.decode(sample) == Self.referenceDecode(sample), "\(sample.debugDescription)")
        }
        // The random texts and the reference's reading of them, the bulk of the work, are made off Swift's pool.
        let randomSamples = try await OffPool.run {
            var generator = SystemRandomNumberGenerator()
            let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_+/= \n.")
            return (0..<2000).map { _ in
                let length = Int.random(in: 0...24, using: &generator)
                let text = String((0..<length).map { _ in alphabet.randomElement(using: &generator)! })
                return (text: text, reference: Self.referenceDecode(text))
            }
        }
        for (text, reference) in randomSamples {
            #expect(Base64URL.decode(text) == reference, "\(text.debugDescription)")
        }
    }
}
