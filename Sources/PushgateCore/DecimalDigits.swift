/// Decimal text of unsigned integers, written straight into byte storage (a JSON body, a log field's
/// string) without making a `String` for each number.
public enum DecimalDigits {
    /// How many digits `value` has in decimal (one for zero).
    public static func count(_ value: UInt64) -> Int {
        var digits = 1
        var rest = value
        while rest >= 10 {
            rest /= 10
            digits += 1
        }
        return digits
    }

    /// Writes `value`'s digits into `buffer` from `start`, which must leave room for ``count(_:)`` of them.
    /// - Returns: the index after the last digit.
    public static func write(_ value: UInt64, into buffer: UnsafeMutableBufferPointer<UInt8>, at start: Int) -> Int {
        let end = start + Self.count(value)
        var rest = value
        for index in stride(from: end - 1, through: start, by: -1) {
            buffer[index] = UInt8(ascii: "0") + UInt8(rest % 10)
            rest /= 10
        }
        return end
    }

    /// Appends `value`'s digits to `output`.
    public static func append(_ value: UInt64, to output: inout [UInt8]) {
        let start = output.count
        output.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: Self.count(value)))
        _ = output.withUnsafeMutableBufferPointer { Self.write(value, into: $0, at: start) }
    }
}
