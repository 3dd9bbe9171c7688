/// A Sygnal-style glob: `*` matches any run of characters, `?` one character; matching is
/// case-insensitive and must cover the whole text.
public struct HostGlob: Sendable, Equatable {
    let pattern: [Character]

    public init(_ pattern: String) {
        self.pattern = Array(pattern.lowercased())
    }

    /// Whether the glob matches all of `text`.
    public func matches(_ text: String) -> Bool {
        let text = Array(text.lowercased())
        var p = 0
        var t = 0
        var star: Int? = nil
        var starText = 0
        while t < text.count {
            if p < self.pattern.count, self.pattern[p] == "?" || self.pattern[p] == text[t] {
                p += 1
                t += 1
            } else if p < self.pattern.count, self.pattern[p] == "*" {
                star = p
                starText = t
                p += 1
            } else if let star {
                p = star + 1
                starText += 1
                t = starText
            } else {
                return false
            }
        }
        while p < self.pattern.count, self.pattern[p] == "*" { p += 1 }
        return p == self.pattern.count
    }
}
