import Foundation

/// How stores persist ``DeviceRegistration/attributes``: a JSON object with sorted keys.
public enum DeviceAttributesCoding {
    /// Encodes attributes as JSON text.
    public static func encode(_ attributes: [String: String]) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // Encoding a [String: String] cannot fail.
        let data = (try? encoder.encode(attributes)) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    /// Decodes attributes stored by ``encode(_:)``.
    /// - Throws: ``StoreError/corruptRow(_:)`` when the text is not a JSON object of strings.
    public static func decode(_ text: String) throws -> [String: String] {
        do {
            return try JSONDecoder().decode([String: String].self, from: Data(text.utf8))
        } catch {
            throw StoreError.corruptRow("device attributes are not a JSON object of strings")
        }
    }
}
