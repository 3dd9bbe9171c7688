import PushgateCore

/// The RFC 8030 headers of a notification, as its front end stated them: `Urgency` and `Topic`. Nothing
/// here chooses a value; it only checks that the push service can take it.
enum WebPushHeaders {
    /// The longest `Topic` push services accept.
    static let maximumTopicLength = 32

    /// The `Urgency`: the notification's stated urgency, else what its stated priority means for its
    /// kind, else nil (no header: the push service's default, `normal`).
    static func urgency(for notification: PushNotification) -> String? {
        notification.effectiveWebPushUrgency?.rawValue
    }

    /// The `Topic` of a notification: nil when it has no collapse id (or an empty one), the collapse id
    /// itself when push services accept it, else a failure saying why it cannot be sent.
    static func topic(for notification: PushNotification) -> Result<String?, InvalidTopic> {
        guard let collapseID = notification.collapseID, !collapseID.isEmpty else { return .success(nil) }
        return Self.isValidTopic(collapseID) ? .success(collapseID) : .failure(InvalidTopic())
    }

    /// Whether `topic` matches `^[0-9A-Za-z_-]+=*$` (base64url characters, then optional `=` padding) and
    /// has at most 32 characters, as push services check it (Mozilla autopush).
    static func isValidTopic(_ topic: String) -> Bool {
        let utf8 = topic.utf8
        guard !utf8.isEmpty, utf8.count <= Self.maximumTopicLength else { return false }
        let significant = utf8.prefix { $0 != UInt8(ascii: "=") }
        guard !significant.isEmpty, utf8.dropFirst(significant.count).allSatisfy({ $0 == UInt8(ascii: "=") }) else { return false }
        return significant.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "_"):
                true
            default:
                false
            }
        }
    }

    /// A collapse id that is not a valid `Topic`: the notification is rejected, never sent with another
    /// Topic or none.
    struct InvalidTopic: Error, Equatable {
        /// The rejection reason.
        var reason: String { "collapse id is not a Web Push Topic (at most \(WebPushHeaders.maximumTopicLength) base64url characters, then optional '=' padding)" }
    }
}
