/// An app id as written under `apps`: an exact id, or a glob where `*` matches any run of characters
/// (including none) and `?` one character, compared case-sensitively over the whole id.
public struct AppPattern: Sendable, Hashable {
    /// The text as configured.
    public let text: String
    private let characters: [Character]

    /// Creates a pattern.
    public init(_ text: String) {
        self.text = text
        self.characters = Array(text)
    }

    /// Whether the text contains glob characters.
    public var isGlob: Bool { self.text.contains("*") || self.text.contains("?") }

    /// Whether `appID` matches the whole pattern.
    public func matches(_ appID: String) -> Bool {
        let subject = Array(appID)
        // Iterative wildcard matching with backtracking to the last `*`.
        var p = 0
        var s = 0
        var star: Int?
        var starMatch = 0
        while s < subject.count {
            if p < self.characters.count, self.characters[p] == "?" || self.characters[p] == subject[s] {
                p += 1
                s += 1
            } else if p < self.characters.count, self.characters[p] == "*" {
                star = p
                starMatch = s
                p += 1
            } else if let starIndex = star {
                p = starIndex + 1
                starMatch += 1
                s = starMatch
            } else {
                return false
            }
        }
        while p < self.characters.count, self.characters[p] == "*" { p += 1 }
        return p == self.characters.count
    }

    /// Whether some app id matches both this pattern and `other` (each `*` may match any run, each `?` one
    /// character): two globs that overlap make those ids ambiguous.
    public func overlaps(_ other: AppPattern) -> Bool {
        let first = self.characters
        let second = other.characters
        // A walk over pairs of positions, one in each pattern, reached after reading the same text.
        var seen = Set<Int>()
        var pending = [(0, 0)]
        while let (i, j) = pending.popLast() {
            guard seen.insert(i * (second.count + 1) + j).inserted else { continue }
            if i == first.count, j == second.count { return true }
            // A `*` may match nothing.
            if i < first.count, first[i] == "*" { pending.append((i + 1, j)) }
            if j < second.count, second[j] == "*" { pending.append((i, j + 1)) }
            // One character both can read: a `*` stays where it is, anything else moves on.
            guard i < first.count, j < second.count else { continue }
            let x = first[i]
            let y = second[j]
            if x != "*", x != "?", y != "*", y != "?", x != y { continue }
            pending.append((x == "*" ? i : i + 1, y == "*" ? j : j + 1))
        }
        return false
    }
}
