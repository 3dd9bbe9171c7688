import Foundation
import PushgateCore
import Testing

@Suite("JSON parser")
struct JSONParserTests {
    static func decoded(_ text: String) -> JSONValue? {
        try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
    }

    /// Documents JSONDecoder reads too.
    static let valid = [
        #"{"notification":{"event_id":"$3957tyerfgewrf384","room_id":"!slw48wfj34rtnrf:example.org","type":"m.room.message","#
            + #""sender":"@exampleuser:matrix.org","sender_display_name":"Major Tom","room_name":"Mission Control","#
            + #""content":{"msgtype":"m.text","body":"I'm floating in a most peculiar way."},"counts":{"unread":2,"missed_calls":1},"#
            + #""devices":[{"app_id":"org.matrix.matrixConsole.ios","pushkey":"V2h5IG9uIGVhcnRoIGRpZCB5b3UgZGVjb2RlIHRoaXM/","#
            + #""pushkey_ts":12345678,"data":{},"tweaks":{"sound":"bing"}}]}}"#,
        #"  [1, -2, 3.5, -0.25e2, 1E3, 0, -0, 12345678901234567890, true, false, null, "", {}, []]  "#,
        #""escapes: \" \\ \/ \b \f \n \r \t \u00e9 \u20ac \ud83d\ude00 \u0000""#,
        "\"ünïcødé ✓ 😀\"",
        #""a\/b+c\/d==\n after: ünï ✓ \u00e9 then more""#,
        "3", "\"x\"", "null",
    ]

    @Test(arguments: Self.valid)
    func readsWhatJSONDecoderReads(text: String) throws {
        let parsed = try JSONParser.parse(Array(text.utf8))
        #expect(parsed == Self.decoded(text))
    }

    /// Texts that are not JSON.
    static let invalid = [
        "", " ", "{", "[1,]", "{\"a\":1,}", "{a:1}", "[1 2]", "01", "1.", ".5", "-", "1e", "+1", "nul", "tru", "\"abc",
        "\"\\x\"", "\"\\u12\"", "\"\\ud800\"", "\"\\udc00\"", "\"\\ud800\\u0041\"", "\"tab\there\"", "1e400", "[1] x", "{\"a\" 1}",
        "\"\\/\tafter an escape\"", "\"\\/unterminated", "\"\\/\\",
    ]

    @Test(arguments: Self.invalid)
    func refusesWhatIsNotJSON(text: String) {
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(Array(text.utf8)) }
    }

    @Test(arguments: Self.valid)
    func skippingAValueReadsPastWhatReadingItReads(text: String) throws {
        // Inside an array, so that what follows the skipped value is read too.
        let document = Array("[\(text), 7]".utf8)
        let after = try JSONParser.walk(document) { parser throws(JSONParser.Failure) in
            var values: [JSONValue] = []
            var first = true
            try parser.readElements { parser throws(JSONParser.Failure) in
                if first {
                    try parser.skipValue()
                    first = false
                } else {
                    values.append(try parser.readValue())
                }
            }
            return values
        }
        #expect(after == [7])
    }

    @Test(arguments: Self.invalid)
    func skippingRefusesWhatReadingRefuses(text: String) {
        #expect(throws: JSONParser.Failure.self) {
            try JSONParser.walk(Array(text.utf8)) { parser throws(JSONParser.Failure) in try parser.skipValue() }
        }
    }

    @Test(arguments: [
        "0", "-0", "7", "-7", "1234567890", "999999999999999", "-999999999999999", "9999999999999999", "12345678901234567",
        "9007199254740993", "-9007199254740993", "1.0", "10e0", "0.5", "-0.0",
    ])
    func numbersReadAsTheTextReadsAsADouble(text: String) throws {
        let expected = try #require(Double(text))
        guard case .number(let value) = try JSONParser.parse(Array(text.utf8)) else {
            Issue.record("not a number")
            return
        }
        #expect(value == expected)
        #expect(value.sign == expected.sign)
    }

    @Test func ofDuplicateKeysTheLastWinsAsInPythonsJSON() throws {
        // Sygnal reads bodies with Python's json module, which keeps the last; JSONDecoder keeps the first.
        #expect(try JSONParser.parse(Array(#"{"a":1,"b":true,"a":2}"#.utf8)) == ["a": 2, "b": true])
    }

    @Test func refusesInvalidUTF8AndExcessiveNesting() {
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse([0x22, 0xC3, 0x28, 0x22]) }
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse([0x22, 0xED, 0xA0, 0x80, 0x22]) }
        // The same after an escape, which reads the string another way.
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse([0x22, 0x5C, 0x2F, 0xC3, 0x28, 0x22]) }
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse([0x22, 0x5C, 0x6E, 0x41, 0xED, 0xA0, 0x80, 0x22]) }
        let deep = String(repeating: "[", count: JSONParser.maximumDepth + 1) + String(repeating: "]", count: JSONParser.maximumDepth + 1)
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(Array(deep.utf8)) }
        let fine = String(repeating: "[", count: JSONParser.maximumDepth) + String(repeating: "]", count: JSONParser.maximumDepth)
        #expect(throws: Never.self) { try JSONParser.parse(Array(fine.utf8)) }
    }

    @Test func randomDocumentsReadBackAsTheyWereWritten() throws {
        var generator = SystemRandomNumberGenerator()
        func random(_ depth: Int) -> JSONValue {
            switch Int.random(in: 0..<(depth > 3 ? 4 : 6), using: &generator) {
            case 0: return .null
            case 1: return .bool(Bool.random(using: &generator))
            case 2: return .number(Double(Int.random(in: -1_000_000...1_000_000, using: &generator)) / 8)
            case 3:
                let scalars = (0..<Int.random(in: 0...12, using: &generator)).compactMap { _ in
                    Unicode.Scalar([0x22, 0x5C, 0x0A, 0x41, 0xE9, 0x1F600, 0x7F, 0x2028, 0x01].randomElement(using: &generator)!)
                }
                return .string(String(String.UnicodeScalarView(scalars)))
            case 4: return .array((0..<Int.random(in: 0...4, using: &generator)).map { _ in random(depth + 1) })
            default:
                return .object(Dictionary((0..<Int.random(in: 0...4, using: &generator)).map { ("k\($0)\u{e9}", random(depth + 1)) }, uniquingKeysWith: { a, _ in a }))
            }
        }
        for _ in 0..<500 {
            let value = random(0)
            let text = try JSONEncoder().encode(value)
            #expect(try JSONParser.parse(Array(text)) == value)
        }
    }

    /// `readMembers` hands keys over without making strings: they match literals as their decoded text
    /// does, code point for code point (as Python's `json` compares them), escaped or not.
    @Test func keysMatchLiteralsAsTheirDecodedText() throws {
        let text = #"{"event_id":1,"ev\u0065nt_id":2,"sender_display_name":3,"":4,"é":5,"\u212Aey":6,"Key":7,"event_i":8,"event_idx":9}"#
        var seen: [String] = []
        try JSONParser.walk(Array(text.utf8)) { parser throws(JSONParser.Failure) in
            try parser.readMembers { parser, key throws(JSONParser.Failure) in
                guard case .number(let number) = try parser.readValue() else { return }
                let label: String
                switch key {
                case "event_id": label = "event_id"
                case "sender_display_name": label = "sender_display_name"
                case "": label = "empty"
                case "Key": label = "Key"
                default: label = "other " + key.string
                }
                #expect((key == "event_id") == (label == "event_id"))
                seen.append("\(label) \(Int(number))")
            }
        }
        #expect(seen == [
            "event_id 1", "event_id 2", "sender_display_name 3", "empty 4", "other é 5", "other \u{212A}ey 6", "Key 7",
            "other event_i 8", "other event_idx 9",
        ])
    }

    @Test(arguments: ["{\"a\tb\":1}", "{\"ab", "{\"a\\x\":1}", "{\"a\":1,\"b\"}"])
    func refusesKeysThatAreNotJSONStrings(text: String) {
        #expect(throws: JSONParser.Failure.self) {
            try JSONParser.walk(Array(text.utf8)) { parser throws(JSONParser.Failure) in
                try parser.readMembers { parser, _ throws(JSONParser.Failure) in _ = try parser.readValue() }
            }
        }
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(Array(text.utf8)) }
    }

    @Test func refusesKeysThatAreNotUTF8() {
        for key: [UInt8] in [[0xC3, 0x28], [0xED, 0xA0, 0x80], [0xFF]] {
            let text = Array("{\"".utf8) + key + Array("\":1}".utf8)
            #expect(throws: JSONParser.Failure.self) {
                try JSONParser.walk(text) { parser throws(JSONParser.Failure) in
                    try parser.readMembers { parser, _ throws(JSONParser.Failure) in _ = try parser.readValue() }
                }
            }
        }
    }

    /// Strings are scanned eight bytes a step: what ends a run (a quote, a backslash, a control character,
    /// a byte outside ASCII to validate) is seen at every offset of a word.
    @Test func readsAndRefusesAByteAtEveryOffset() throws {
        for length in 1...40 {
            for offset in 0..<length {
                let before = Array(repeating: UInt8(ascii: "a"), count: offset)
                let after = Array(repeating: UInt8(ascii: "b"), count: length - offset - 1)
                for (special, expected) in [(#"\""#, "\""), (#"\\"#, "\\"), (#"\/"#, "/"), (#"\n"#, "\n"), (#"\u00e9"#, "é"), ("é", "é"), ("😀", "😀")] {
                    let text = [UInt8(ascii: "\"")] + before + Array(special.utf8) + after + [UInt8(ascii: "\"")]
                    let string = String(decoding: before, as: UTF8.self) + expected + String(decoding: after, as: UTF8.self)
                    #expect(try JSONParser.parse(text) == .string(string), "\(length) \(offset) \(special)")
                    #expect(try JSONParser.parse(Array("[\"x\\/\",".utf8) + text + [UInt8(ascii: "]")]) == ["x/", .string(string)])
                }
                for bad: UInt8 in [0x00, 0x01, 0x0A, 0x1F, 0xFF, 0x80] {
                    let text = [UInt8(ascii: "\"")] + before + [bad] + after + [UInt8(ascii: "\"")]
                    #expect(throws: JSONParser.Failure.self, "\(length) \(offset) \(bad)") { try JSONParser.parse(text) }
                    let escaped = Array(#""\/"#.utf8) + before + [bad] + after + [UInt8(ascii: "\"")]
                    #expect(throws: JSONParser.Failure.self, "\(length) \(offset) \(bad)") { try JSONParser.parse(escaped) }
                }
                let unterminated = [UInt8(ascii: "\"")] + before + after
                #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(unterminated) }
            }
        }
    }
}
