@testable import PushgateConfig
import Testing
import Yams

@Suite("YAML 1.1 plain scalars")
struct YAML11PlainScalarTests {
    /// Plain scalars of each kind and near misses, including the odd corners of YAML 1.1 (octal without
    /// `o`, sexagesimal numbers, underscores, signed infinities, exponents without a dot).
    static let samples = [
        "", "~", "null", "Null", "NULL", "nULL", "none",
        "yes", "Yes", "YES", "yEs", "no", "NO", "true", "True", "TRUE", "tRUE", "false", "on", "ON", "off", "Off", "y", "n",
        "0", "+0", "-0", "00", "07", "08", "0_7", "0o17", "0o", "0o8", "0b101", "0b", "0b102", "-0b1", "0x1F", "0xfg", "0x", "+0x_a",
        "1", "12", "-12", "+12", "1_000", "1__0", "1_", "_1", "01_9",
        "1:30", "190:20:30", "1:60", "1:5", "1:05:7", "1:05:x", "0:30", "-1:30", "1:300",
        "1.5", "-1.5", "+1.", "1.", ".5", "-.5", "._", "1e5", "1E+5", "1e", "1.5e-3", ".5e+3", ".5e3", "1.5.3", "1_0.0_1",
        "1:30.5", "1:30.", "1:30.5e3", "190:20:30.15",
        ".inf", "-.inf", "+.INF", ".Inf", "inf", ".nan", "-.nan", ".NaN", "nan",
        "2001-12-14", "2001-12-14t21:59:43.10-05:00", "<<", "=", "abc", "1a", "a1", "--1", "+-1", "1 000", "٣",
    ]

    /// Sexagesimal ints read with checked arithmetic: the same values as Yams where they fit, and text
    /// (refused by a key that wants a number) where they do not; Yams's own reading trapped.
    @Test func sexagesimalIntsAreReadWithoutOverflow() throws {
        for text in ["1:30", "-1:30", "+2:0:5", "190:20:30", "1_0:00"] {
            let scalar = Node.Scalar(text)
            #expect(YAMLConfigLoader.int(scalar) == Int.construct(from: scalar), "\(text)")
        }
        // Sixty to the tenth fits (Yams's own reading trapped on it); to the eleventh does not.
        #expect(YAMLConfigLoader.int(Node.Scalar("1:0:0:0:0:0:0:0:0:0:0")) == 604_661_760_000_000_000)
        #expect(YAMLConfigLoader.int(Node.Scalar("1:0:0:0:0:0:0:0:0:0:0:0")) == nil)
        #expect(YAMLConfigLoader.int(Node.Scalar("9223372036854775807:0")) == nil)
        #expect(throws: ConfigurationError.self) { try GatewayConfiguration(yaml: "http: {port: 1:0:0:0:0:0:0:0:0:0:0}") }
        #expect(try GatewayConfiguration(yaml: "http: {port: 1:23}").http.port == 83)
    }

    @Test func tagsAsYamsDefaultResolverDoes() throws {
        for sample in Self.samples {
            // Yams's default resolver (its regular expressions) is the reference; it tags timestamps, `<<`
            // and `=` too, which the configuration reads as strings.
            let expected = Yams.Tag.Name(rawValue: try #require(try Yams.compose(yaml: "value: \(sample)\n")?["value"]).tag.description)
            let reference: Yams.Tag.Name = [.timestamp, .merge, .value].contains(expected) ? .str : expected
            #expect(YAML11PlainScalar.tag(of: sample) == reference, "\(sample.debugDescription)")
        }
    }
}
