import PushgateCore
@testable import PushgateGorush
import Testing

/// Numbers as Go's `encoding/json` writes a `float64` (`encode.go` `floatEncoder`: `strconv` 'f' with
/// the shortest digits from 1e-6 to below 1e21, 'e' outside, `e-07` shortened to `e-7`). The expected
/// texts are what `json.Marshal` printed for these values with Debian's Go 1.19 (2026-12-02).
@Suite("gorush: numbers as Go writes them")
struct GoFloatTextTests {
    @Test(arguments: [
        (0.0, "0"), (-0.0, "-0"), (1.0, "1"), (-2.5, "-2.5"), (0.1, "0.1"), (123.456, "123.456"),
        (0.00001, "0.00001"), (0.000001, "0.000001"), (0.0000015, "0.0000015"), (0.0000001, "1e-7"), (1.5e-7, "1.5e-7"),
        (1e-10, "1e-10"), (5e-324, "5e-324"), (1e15, "1000000000000000"), (1e16, "10000000000000000"),
        (1e20, "100000000000000000000"), (1e21, "1e+21"), (1.5e300, "1.5e+300"), (12345678901234567890.0, "12345678901234567000"),
        (123456789.123, "123456789.123"), (-0.00001, "-0.00001"), (1.7976931348623157e308, "1.7976931348623157e+308"),
    ])
    func floatsAreWrittenAsGoWritesThem(_ value: Double, _ expected: String) {
        #expect(GoFloatText.text(value) == expected)
    }

    /// Nested numbers too, and keys in byte order.
    @Test func dataValuesAreGoJSONText() {
        #expect(GoJSON.text(["z": 0.00001, "a": [1e21, 2, "<x>"], "é": true, "e": .null]) == #"{"a":[1e+21,2,"\u003cx\u003e"],"e":null,"z":0.00001,"é":true}"#)
    }
}
