public import PushgateCore

/// A JSON object section of a provider message (FCM's or HMS's `android`) to which a back end adds what
/// the front end stated, never overriding what the payload set itself, and which exists only when the
/// payload or a stated field makes it.
public struct StatedSection: Sendable {
    /// The section's members; nil while it does not exist.
    public private(set) var members: [String: JSONValue]?

    /// The section as the payload has it (absent, null, or an object); nil when it is anything else.
    public init?(_ value: JSONValue?) {
        switch value {
        case nil, .null?: self.members = nil
        case .object(let members)?: self.members = members
        case _?: return nil
        }
    }

    /// Sets `key` to a stated `value` unless the payload set it.
    public mutating func state(_ key: String, _ value: JSONValue) {
        var members = self.members ?? [:]
        if members[key] == nil { members[key] = value }
        self.members = members
    }

    /// The section to put in the message, or nil to leave it out.
    public var value: JSONValue? { self.members.map(JSONValue.object) }

    /// Whether a message goes to a topic or condition (a non-empty string at either key) rather than to
    /// tokens.
    public static func isTopicSend(_ message: [String: JSONValue]) -> Bool {
        for key in ["topic", "condition"] {
            if case .string(let value)? = message[key], !value.isEmpty { return true }
        }
        return false
    }
}
