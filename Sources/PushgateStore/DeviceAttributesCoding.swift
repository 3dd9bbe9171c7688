import Foundation
import PushgateCore

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
        // Most devices have none; reading goes through PushgateCore's parser, about a tenth of the cost of
        // `JSONDecoder` (which the Nextcloud front end paid for every device of a batch).
        if text == "{}" { return [:] }
        var attributes: [String: String] = [:]
        var allStrings = true
        do {
            try JSONParser.walk(Array(text.utf8)) { parser throws(JSONParser.Failure) in
                try parser.readMembers { parser, key throws(JSONParser.Failure) in
                    if case .string(let value) = try parser.readValue() {
                        attributes[key.string] = value
                    } else {
                        allStrings = false
                    }
                }
            }
        } catch {
            allStrings = false
        }
        guard allStrings else { throw StoreError.corruptRow("device attributes are not a JSON object of strings") }
        return attributes
    }
}
