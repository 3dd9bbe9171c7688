import PushgateProviderSupport
import Testing

@Suite struct HostGlobTests {
    /// The glob as `Character`s, the way the matcher worked before its ASCII path: the oracle.
    private static func characterMatch(_ pattern: String, _ text: String) -> Bool {
        let pattern = Array(pattern.lowercased())
        let text = Array(text.lowercased())
        func match(_ p: Int, _ t: Int) -> Bool {
            if p == pattern.count { return t == text.count }
            if pattern[p] == "*" { return (t...text.count).contains { match(p + 1, $0) } }
            guard t < text.count, pattern[p] == "?" || pattern[p] == text[t] else { return false }
            return match(p + 1, t + 1)
        }
        return match(0, 0)
    }

    @Test func matchesAsTheCharacterGlobDoes() {
        let patterns = [
            "*", "?", "*.push.example", "Push.*", "a*b*c", "*?*", "127.0.0.1:*", "updates?.example", "*.ÉXAMPLE",
            "é?", "[a]*", "@", "?*?", "**x", "x**", "", "a?b", "a\r\nb", "a\r?",
        ]
        let texts = [
            "", "a", "abc", "aXbYc", "acb", "fcm.PUSH.example", "push.example.evil", "PUSH.it", "127.0.0.1:8080",
            "127.0.0.1", "updates1.example", "updates12.example", "web.éxample", "WEB.ÉXAMPLE", "é1", "É1", "e\u{301}1",
            "[a]bc", "@", "ZZx", "xZZ", "[", "`", "{", "a\r\nb", "a\rb", "a\nb", "A\r\n",
        ]
        for pattern in patterns {
            for text in texts {
                #expect(HostGlob(pattern).matches(text) == Self.characterMatch(pattern, text), "\(pattern) against \(text)")
            }
        }
    }

    @Test func takesCRLFAsOneCharacter() {
        // CR LF is one `Character`, so one `?` matches it, as it did before the byte path.
        #expect(HostGlob("a?b").matches("a\r\nb"))
        #expect(!HostGlob("a??b").matches("a\r\nb"))
        #expect(HostGlob("a?b").matches("a\rb"))
    }

    @Test func comparesASCIILettersWithoutCase() {
        // The bytes just outside A–Z and a–z ("@", "[", "`", "{") are not letters and only match themselves.
        #expect(HostGlob("a@z").matches("A@Z"))
        #expect(!HostGlob("a`z").matches("a@z"))
        #expect(!HostGlob("[").matches("{"))
        #expect(HostGlob("QZ").matches("qz"))
    }
}
