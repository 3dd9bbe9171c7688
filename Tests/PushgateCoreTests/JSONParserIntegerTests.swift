import PushgateCore
import Testing

/// ``JSONParser/readExactInteger()``: integers exactly, beyond what a `Double` holds; nil for other values.
@Suite("JSON parser: exact integers")
struct JSONParserIntegerTests {
    static func read(_ text: String) throws -> [Int64?] {
        try JSONParser.walk(Array(text.utf8)) { parser throws(JSONParser.Failure) in
            var values: [Int64?] = []
            try parser.readElements { parser throws(JSONParser.Failure) in values.append(try parser.readExactInteger()) }
            return values
        }
    }

    @Test func integersAreReadExactlyAndOtherValuesAreNil() throws {
        let text = """
            [1764000000123456789, 9007199254740993, -9223372036854775808, 9223372036854775807, 0, -0, 42,
             9223372036854775808, -9223372036854775809, 12345678901234567890123, 1.0, 1e3, -2.5E-1,
             "5", null, true, {"a": [1]}, [2, 3], 7]
            """
        let values = try Self.read(text)
        #expect(values == [
            1_764_000_000_123_456_789, 9_007_199_254_740_993, .min, .max, 0, 0, 42,
            nil, nil, nil, nil, nil, nil,
            nil, nil, nil, nil, nil, 7,
        ])
        // What a Double would have made of the first two.
        #expect(Int64(exactly: Double(1_764_000_000_123_456_789 as Int64)) != 1_764_000_000_123_456_789)
        #expect(Int64(exactly: Double(9_007_199_254_740_993 as Int64)) != 9_007_199_254_740_993)
    }

    @Test(arguments: ["[01]", "[-]", "[1.]", "[1e]", "[--1]", "[1", "[\"a]"])
    func numbersAndValuesOutsideJSONAreRefused(text: String) {
        #expect(throws: JSONParser.Failure.self) { _ = try Self.read(text) }
    }
}
