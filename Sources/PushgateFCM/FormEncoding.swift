import Foundation

/// `application/x-www-form-urlencoded` bodies, as OAuth 2.0 token requests use them.
enum FormEncoding {
    private static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// Encodes the pairs in order, percent-encoding everything outside the unreserved set.
    static func encode(_ pairs: [(String, String)]) -> String {
        pairs.map { name, value in
            Self.escape(name) + "=" + Self.escape(value)
        }.joined(separator: "&")
    }

    private static func escape(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: Self.unreserved) ?? text
    }
}
