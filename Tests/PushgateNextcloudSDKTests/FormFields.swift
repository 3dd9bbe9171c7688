import Foundation

/// Decodes `application/x-www-form-urlencoded` text as PHP and Go do (`+` is a space, `%XX` a byte), so a
/// client that forgot to percent-encode `+` or `/` is caught by the byte-exact comparisons.
enum FormFields {
    /// The fields of `text`; `nil` if a name repeats or a component is not valid percent-encoding.
    static func decode(_ text: String) -> [String: String]? {
        var fields: [String: String] = [:]
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = Self.component(parts[0]), let value = parts.count == 2 ? Self.component(parts[1]) : "" else {
                return nil
            }
            guard fields[name] == nil else { return nil }
            fields[name] = value
        }
        return fields
    }

    private static func component(_ text: Substring) -> String? {
        text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding
    }
}
