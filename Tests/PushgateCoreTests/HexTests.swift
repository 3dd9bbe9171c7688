import Foundation
import PushgateCore
import Testing

@Suite("Hex")
struct HexTests {
    @Test func everyByteIsTwoLowercaseDigitsWhateverHoldsTheBytes() {
        let bytes = (0...255).map { UInt8($0) }
        // The reference: Foundation's formatter, one byte at a time.
        let expected = bytes.map { String(format: "%02x", $0) }.joined()
        #expect(Hex.lowercase(bytes) == expected)
        #expect(Hex.lowercase(Data(bytes)) == expected)
        #expect(Hex.lowercase(bytes[16...]) == String(expected.dropFirst(32)))
        // A sequence without contiguous storage.
        #expect(Hex.lowercase(bytes.lazy.map { $0 }.prefix(3)) == "000102")
        #expect(Hex.lowercase([UInt8]()) == "")
    }

    @Test func decodingReadsEitherCaseAndRejectsWhatIsNotHex() {
        #expect(Hex.decode("00ff7Fa0") == [0x00, 0xff, 0x7f, 0xa0])
        #expect(Hex.decode("") == [])
        for bad in ["0", "0g", "0x00", " 00"] { #expect(Hex.decode(bad) == nil, "\(bad)") }
        let bytes = (0...255).map { UInt8($0) }
        #expect(Hex.decode(Hex.lowercase(bytes)) == bytes)
    }

    @Test func aUUIDsLowercaseTextIsFoundationsTextLowercased() {
        for _ in 0..<100 {
            let uuid = UUID()
            #expect(uuid.lowercaseText == uuid.uuidString.lowercased())
        }
        let fixed = UUID(uuidString: "00FF10AB-CDEF-4012-8345-6789ABCDEF01")!
        #expect(fixed.lowercaseText == "00ff10ab-cdef-4012-8345-6789abcdef01")
    }
}
