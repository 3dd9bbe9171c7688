public import PushgateCore

/// JSON text as Go's `encoding/json` writes it, where gorush's callers see it byte for byte: object keys
/// sorted by their bytes, no spaces, numbers as Go writes a `float64` (``GoFloatText``), and `<`, `>`,
/// `&`, U+2028 and U+2029 escaped as `\u003c`, `\u003e`, `\u0026`, `\u2028`, `\u2029`.
public enum GoJSON {
    /// The compact text of a value.
    public static func text(_ value: JSONValue) -> String {
        var text = ""
        Self.write(value, into: &text)
        return text
    }

    private static func write(_ value: JSONValue, into text: inout String) {
        switch value {
        case .null: text += "null"
        case .bool(let flag): text += flag ? "true" : "false"
        case .number(let number): text += GoFloatText.text(number)
        case .string(let string):
            let bytes = (try? JSONText.encode(.string(string))) ?? Array("\"\"".utf8)
            text += Self.escapingHTML(String(decoding: bytes, as: UTF8.self))
        case .array(let items):
            text += "["
            for (index, item) in items.enumerated() {
                if index > 0 { text += "," }
                Self.write(item, into: &text)
            }
            text += "]"
        case .object(let members):
            text += "{"
            for (index, member) in members.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }).enumerated() {
                if index > 0 { text += "," }
                Self.write(.string(member.key), into: &text)
                text += ":"
                Self.write(member.value, into: &text)
            }
            text += "}"
        }
    }

    /// `text` with Go's HTML-safe escapes (only inside strings matter, and these characters cannot occur
    /// outside them in JSON).
    static func escapingHTML(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { $0 == "<" || $0 == ">" || $0 == "&" || $0 == "\u{2028}" || $0 == "\u{2029}" }) else { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count + 16)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "<": result += "\\u003c"
            case ">": result += "\\u003e"
            case "&": result += "\\u0026"
            case "\u{2028}": result += "\\u2028"
            case "\u{2029}": result += "\\u2029"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// A JSON string literal, Go-escaped.
    public static func string(_ text: String) -> String {
        Self.text(.string(text))
    }
}
