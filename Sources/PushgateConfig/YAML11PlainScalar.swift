import Yams

/// The tag YAML 1.1 gives a plain (unquoted, untagged) scalar: null, bool, int, float or str, decided by
/// the same patterns as Yams's default resolver, matched by hand. Yams's resolver compiles its patterns
/// with `NSRegularExpression`, which loads ICU's code and data into the gateway: megabytes of resident
/// memory for the few strings of one configuration file.
enum YAML11PlainScalar {
    /// The tag of a plain scalar whose text is `text`. Timestamps, `<<` and `=` are left as str: the
    /// configuration reads them as strings either way.
    static func tag(of text: String) -> Tag.Name {
        let bytes = Array(text.utf8)
        if Self.bools.contains(text) { return .bool }
        if Self.isInt(bytes[...]) { return .int }
        if Self.isFloat(bytes[...]) { return .float }
        if Self.nulls.contains(text) { return .null }
        return .str
    }

    private static let bools: Set<String> = [
        "yes", "Yes", "YES", "no", "No", "NO", "true", "True", "TRUE", "false", "False", "FALSE", "on", "On", "ON", "off", "Off", "OFF",
    ]
    private static let nulls: Set<String> = ["~", "null", "Null", "NULL", ""]

    private static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
    private static func isDigitOrUnderscore(_ byte: UInt8) -> Bool { Self.isDigit(byte) || byte == UInt8(ascii: "_") }

    private static func droppingSign(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        guard let first = bytes.first, first == UInt8(ascii: "+") || first == UInt8(ascii: "-") else { return bytes }
        return bytes.dropFirst()
    }

    /// `[-+]?` then `0b[0-1_]+`, `0o?[0-7_]+`, `0|[1-9][0-9_]*`, `0x[0-9a-fA-F_]+` or a sexagesimal
    /// `[1-9][0-9_]*(:[0-5]?[0-9])+`.
    private static func isInt(_ whole: ArraySlice<UInt8>) -> Bool {
        let bytes = Self.droppingSign(whole)
        guard let first = bytes.first else { return false }
        if first == UInt8(ascii: "0") {
            let rest = bytes.dropFirst()
            if rest.isEmpty { return true }
            func all(_ body: ArraySlice<UInt8>, _ allowed: (UInt8) -> Bool) -> Bool { !body.isEmpty && body.allSatisfy(allowed) }
            let octal = { (byte: UInt8) in (UInt8(ascii: "0")...UInt8(ascii: "7")).contains(byte) || byte == UInt8(ascii: "_") }
            switch rest.first {
            case UInt8(ascii: "b"):
                return all(rest.dropFirst()) { $0 == UInt8(ascii: "0") || $0 == UInt8(ascii: "1") || $0 == UInt8(ascii: "_") }
            case UInt8(ascii: "x"):
                return all(rest.dropFirst()) { Self.isDigit($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0 | 0x20) || $0 == UInt8(ascii: "_") }
            case UInt8(ascii: "o"):
                return all(rest.dropFirst(), octal)
            default:
                return all(rest, octal)
            }
        }
        guard Self.isDigit(first) else { return false }
        let groups = bytes.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
        guard groups[0].dropFirst().allSatisfy(Self.isDigitOrUnderscore) else { return false }
        return groups.dropFirst().allSatisfy(Self.isSexagesimalDigits)
    }

    /// `[0-5]?[0-9]`.
    private static func isSexagesimalDigits(_ group: ArraySlice<UInt8>) -> Bool {
        switch group.count {
        case 1: return Self.isDigit(group[group.startIndex])
        case 2: return (UInt8(ascii: "0")...UInt8(ascii: "5")).contains(group[group.startIndex]) && Self.isDigit(group[group.startIndex + 1])
        default: return false
        }
    }

    /// `[-+]?[0-9][0-9_]*(\.[0-9_]*)?([eE][-+]?[0-9]+)?`, `\.[0-9_]+([eE][-+][0-9]+)?`,
    /// `[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+\.[0-9_]*`, `[-+]?\.(inf|Inf|INF)` or `\.(nan|NaN|NAN)`.
    private static func isFloat(_ whole: ArraySlice<UInt8>) -> Bool {
        let text = String(decoding: whole, as: UTF8.self)
        if [".nan", ".NaN", ".NAN"].contains(text) { return true }
        let bytes = Self.droppingSign(whole)
        if [".inf", ".Inf", ".INF"].contains(String(decoding: bytes, as: UTF8.self)) { return true }
        guard let first = bytes.first else { return false }
        if first == UInt8(ascii: ".") {
            // No sign in this form.
            guard bytes.count == whole.count else { return false }
            let body = bytes.dropFirst()
            let mantissaEnd = body.firstIndex { !Self.isDigitOrUnderscore($0) } ?? body.endIndex
            guard mantissaEnd > body.startIndex else { return false }
            return Self.isExponent(body[mantissaEnd...], signRequired: true)
        }
        guard Self.isDigit(first) else { return false }
        if bytes.contains(UInt8(ascii: ":")) {
            guard let dot = bytes.firstIndex(of: UInt8(ascii: ".")), bytes[(dot + 1)...].allSatisfy(Self.isDigitOrUnderscore) else { return false }
            let groups = bytes[..<dot].split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
            return groups.count > 1 && groups[0].allSatisfy(Self.isDigitOrUnderscore) && groups.dropFirst().allSatisfy(Self.isSexagesimalDigits)
        }
        var index = bytes.index(after: bytes.startIndex)
        while index < bytes.endIndex, Self.isDigitOrUnderscore(bytes[index]) { index += 1 }
        if index < bytes.endIndex, bytes[index] == UInt8(ascii: ".") {
            index += 1
            while index < bytes.endIndex, Self.isDigitOrUnderscore(bytes[index]) { index += 1 }
        }
        return Self.isExponent(bytes[index...], signRequired: false)
    }

    /// Empty, or `[eE]` then a sign (required or optional) and `[0-9]+`.
    private static func isExponent(_ bytes: ArraySlice<UInt8>, signRequired: Bool) -> Bool {
        guard let first = bytes.first else { return true }
        guard first == UInt8(ascii: "e") || first == UInt8(ascii: "E") else { return false }
        var digits = bytes.dropFirst()
        if let sign = digits.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
            digits = digits.dropFirst()
        } else if signRequired {
            return false
        }
        return !digits.isEmpty && digits.allSatisfy(Self.isDigit)
    }
}
