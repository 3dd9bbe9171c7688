/// A number as Go's `encoding/json` writes a `float64` (how gorush's callers' numbers reach FCM's `data`):
/// the shortest digits that read back as the same value, in plain decimal notation from 1e-6 up to 1e21
/// (`0.00001`, `100000000000000000000`), in exponent notation outside it with at least two exponent digits
/// for positive exponents and no leading zero for negative ones (`1e+21`, `1.5e-7`).
enum GoFloatText {
    static func text(_ value: Double) -> String {
        // JSON that was read holds neither infinities nor NaN; Go refuses to write them at all.
        guard value.isFinite else { return "null" }
        guard value != 0 else { return value.sign == .minus ? "-0" : "0" }
        let (digits, exponent) = Self.shortestDigits(of: value.magnitude)
        let sign = value < 0 ? "-" : ""
        let magnitude = value.magnitude
        if magnitude < 1e-6 || magnitude >= 1e21 {
            var text = sign + String(digits.first!)
            if digits.count > 1 { text += "." + digits.dropFirst() }
            let power = abs(exponent)
            if exponent < 0 {
                text += "e-" + String(power)
            } else {
                text += "e+" + (power < 10 ? "0" : "") + String(power)
            }
            return text
        }
        if exponent < 0 {
            return sign + "0." + String(repeating: "0", count: -exponent - 1) + digits
        }
        if digits.count <= exponent + 1 {
            return sign + digits + String(repeating: "0", count: exponent + 1 - digits.count)
        }
        let point = digits.index(digits.startIndex, offsetBy: exponent + 1)
        return sign + digits[..<point] + "." + digits[point...]
    }

    /// The shortest round-trip digits of a positive finite value (no leading or trailing zeros) and the
    /// power of ten of the first: the value is `d.ddd × 10^exponent`. From Swift's own shortest form.
    static func shortestDigits(of value: Double) -> (digits: String, exponent: Int) {
        let description = value.description
        let parts = description.split(separator: "e", maxSplits: 1)
        let mantissa = parts[0]
        let scale = parts.count > 1 ? Int(parts[1].hasPrefix("+") ? parts[1].dropFirst() : parts[1]) ?? 0 : 0
        let pieces = mantissa.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let whole = pieces[0]
        let fraction = pieces.count > 1 ? pieces[1] : ""
        let all = Array(whole + fraction)
        let leadingZeros = all.prefix { $0 == "0" }.count
        var significant = all.dropFirst(leadingZeros)
        while significant.last == "0" { significant.removeLast() }
        return (String(significant), whole.count - 1 - leadingZeros + scale)
    }
}
