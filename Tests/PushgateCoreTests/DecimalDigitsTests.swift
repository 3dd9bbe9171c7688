import PushgateCore
import Testing

/// Decimal digits written into bytes read as `String(_:)` writes the number.
@Suite("Decimal digits")
struct DecimalDigitsTests {
    @Test func digitsReadAsStringWritesThem() {
        let samples: [UInt64] = [0, 1, 9, 10, 99, 100, 255, 1000, 999_999, 1_000_000, .max - 1, .max]
            + (0..<2000).map { _ in UInt64.random(in: .min ... .max) >> UInt64.random(in: 0...63) }
        for value in samples {
            var appended = Array("x".utf8)
            DecimalDigits.append(value, to: &appended)
            #expect(String(decoding: appended, as: UTF8.self) == "x\(value)")
            #expect(DecimalDigits.count(value) == String(value).count)
            let written = String(unsafeUninitializedCapacity: 22) { buffer in
                buffer[0] = UInt8(ascii: "[")
                let end = DecimalDigits.write(value, into: buffer, at: 1)
                buffer[end] = UInt8(ascii: "]")
                return end + 1
            }
            #expect(written == "[\(value)]")
        }
    }
}
