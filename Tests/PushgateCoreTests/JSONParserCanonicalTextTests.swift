import PushgateCore
import Testing

/// Reading JSON text straight into the text ``JSONText`` writes must give the same bytes as reading the
/// value and writing it, for any text a sender may write (keys in any order and repeated, escapes,
/// whitespace), and must refuse exactly the text ``JSONParser/parse(_:)`` refuses.
@Suite("JSON text read into its canonical form")
struct JSONParserCanonicalTextTests {
    /// The canonical text, or nil where the reader leaves the value to the long way.
    static func canonical(_ text: String) throws(JSONParser.Failure) -> [UInt8]? {
        var output: [UInt8] = []
        let exact = try JSONParser.walk(Array(text.utf8)) { parser throws(JSONParser.Failure) in try parser.readCanonicalText(into: &output) }
        return exact ? output : nil
    }

    static func expected(_ text: String) throws -> [UInt8] {
        try JSONText.encode(try JSONParser.parse(Array(text.utf8)))
    }

    static let written = [
        "null", "true", "false", "0", "-0", "7", "-12", "999999999999999", "1e3", "-2E+2", "100.0", "\"\"", "\"plain\"",
        #""esc\"aped\\ \/ \b\f\n\r\t \u0001 \u001f \u007f \u00e9 \ud83d\ude00""#, "\"raw é 😀 \u{2028}\"", "[]", "{}", " [ 1 , [ ] , { } ] ",
        #"{"b":1,"a":2}"#, #"{"a":1,"a":2}"#, #"{"a":{"z":1,"y":[{"d":0,"c":1}]},"a":{"x":2}}"#, #"{"a b":1,"a":2,"ab":3,"a!":4,"":5}"#,
        #"{"k\u0065y":1,"key":2,"kex":3}"#, #"{ "notification" : { "counts" : { "unread" : 2 } , "event_id" : "$e" } }"#,
    ]

    @Test(arguments: Self.written)
    func writesWhatTheValueWrites(text: String) throws {
        let canonical = try #require(try Self.canonical(text))
        #expect(canonical == (try Self.expected(text)))
    }

    /// Left to the long way: keys outside ASCII or with escapes in their text, numbers JSONEncoder writes.
    static let leftToTheLongWay = [#"{"é":1}"#, #"{"a\"b":1}"#, #"{"a\nb":1}"#, "1.5", "1e15", "12345678901234567890", #"[1,{"x":0.25}]"#]

    @Test(arguments: Self.leftToTheLongWay)
    func leavesToTheLongWayWhatOnlyTheEncoderWrites(text: String) throws {
        #expect(try Self.canonical(text) == nil)
    }

    static let refused = [
        "", "{", "[1,]", #"{"a":1,}"#, #"{"a" 1}"#, "01", "-", "1.", "1e", "tru", "nul", #""\x""#, #""\ud83d""#, "\"\u{1}\"", #"{"a":1}x"#,
        "[\"\u{FFFF}\"", "\"unterminated", #"{1:2}"#,
    ]

    @Test(arguments: Self.refused)
    func refusesWhatTheParserRefuses(text: String) {
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(Array(text.utf8)) }
        #expect(throws: JSONParser.Failure.self) { try Self.canonical(text) }
    }

    @Test func refusesInvalidUTF8InAStringItCopies() {
        for bytes: [UInt8] in [[0x22, 0xC3, 0x28, 0x22], [0x22, 0x61, 0xFF, 0x22], [0x5B, 0x22, 0xED, 0xA0, 0x80, 0x22, 0x5D]] {
            #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(bytes) }
            #expect(throws: JSONParser.Failure.self) {
                var output: [UInt8] = []
                _ = try JSONParser.walk(bytes) { parser throws(JSONParser.Failure) in try parser.readCanonicalText(into: &output) }
            }
        }
    }

    @Test func keepsOnlyTheMembersAskedFor() throws {
        var output: [UInt8] = []
        var seen: [String] = []
        let text = #"{"z":1,"devices":[{"pushkey":"x"}],"a":{"devices":2}}"#
        let exact = try JSONParser.walk(Array(text.utf8)) { parser throws(JSONParser.Failure) in
            try parser.readCanonicalObject(into: &output) { key in
                seen.append(key.string)
                return !(key == "devices")
            }
        }
        #expect(exact)
        #expect(String(decoding: output, as: UTF8.self) == #"{"a":{"devices":2},"z":1}"#)
        #expect(seen == ["z", "devices", "a"])
    }

    // MARK: Random text

    static let keys = ["a", "b", "ab", "a b", "a!", "B", "", "event_id", "counts", "k\\u0065y", "key", "\\/x", "é"]
    static let strings = ["", "x", "Hello", "a\\\"b", "\\/\\n\\t", "\\u00e9\\ud83d\\ude00", "é😀", "\\u0000", "https://e.org/?a=1&b=<2>"]
    static let numbers = ["0", "-0", "1", "-17", "42", "999999999999999", "1e2", "-1.0", "0.5", "1e300", "123456789012345678"]
    static let spaces = ["", " ", "\n", "\t ", "\r\n  "]

    static func randomText(depth: Int, using generator: inout SystemRandomNumberGenerator) -> String {
        func space() -> String { Self.spaces.randomElement(using: &generator)! }
        switch Int.random(in: 0..<(depth > 3 ? 5 : 7), using: &generator) {
        case 0: return ["null", "true", "false"].randomElement(using: &generator)!
        case 1, 2: return Self.numbers.randomElement(using: &generator)!
        case 3, 4: return "\"" + Self.strings.randomElement(using: &generator)! + "\""
        case 5:
            let elements = (0..<Int.random(in: 0...4, using: &generator)).map { _ in space() + Self.randomText(depth: depth + 1, using: &generator) + space() }
            return "[" + elements.joined(separator: ",") + "]"
        default:
            let members = (0..<Int.random(in: 0...6, using: &generator)).map { _ in
                // Mostly ASCII keys, as notifications have.
                let key = Int.random(in: 0..<12, using: &generator) == 0 ? "é" : Self.keys.dropLast().randomElement(using: &generator)!
                return space() + "\"" + key + "\"" + space() + ":" + space() + Self.randomText(depth: depth + 1, using: &generator) + space()
            }
            return "{" + members.joined(separator: ",") + "}"
        }
    }

    @Test func randomTextIsWrittenAsItsValueIs() throws {
        var generator = SystemRandomNumberGenerator()
        var written = 0
        for _ in 0..<3000 {
            let text = Self.randomText(depth: 0, using: &generator)
            let expected = try Self.expected(text)
            guard let canonical = try Self.canonical(text) else { continue }
            written += 1
            #expect(canonical == expected, "\(text)")
        }
        // Most of it is written directly (the rest holds a fraction, a large number or a key outside ASCII).
        #expect(written > 1000)
    }
}
