import Foundation

/// Reads `application/x-www-form-urlencoded` text as real clients send it to the proxy: `+` is a space,
/// percent escapes are decoded, and later duplicates win.
enum NextcloudForm {
    /// The fields by name; a later duplicate replaces an earlier one.
    static func parse(_ text: Substring) -> [String: String] {
        var fields: [String: String] = [:]
        for (name, value) in Self.pairs(text) { fields[name] = value }
        return fields
    }

    /// Every name and value, in order; pairs whose escapes do not decode are skipped.
    static func pairs(_ text: Substring) -> [(String, String)] {
        var pairs: [(String, String)] = []
        for pair in text.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = Self.decode(parts[0]), !name.isEmpty else { continue }
            pairs.append((name, parts.count > 1 ? (Self.decode(parts[1]) ?? "") : ""))
        }
        return pairs
    }

    private static func decode(_ text: Substring) -> String? {
        text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding
    }
}
