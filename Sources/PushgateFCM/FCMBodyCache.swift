import PushgateCore
import Synchronization

/// FCM request bodies for the tokens of one notification.
///
/// A gorush request for 100 Android devices is one notification sent 100 times with a different token;
/// building and encoding the message for each was a tenth of the work per token. The second time a
/// notification comes, its body is encoded once more with a placeholder for the token and kept as the text
/// before and after the token's quoted value; each further token is written between the two. The text is
/// the same, byte for byte, as encoding the message for that token.
///
/// Only the last ``capacity`` notifications are kept: the tokens of one notification are claimed together,
/// and a notification sent once (a Matrix or Nextcloud push) costs one comparison and no template.
final class FCMBodyCache: Sendable {
    /// What is kept for one recent notification.
    private enum Template: Sendable {
        /// Seen once: no template yet.
        case seenOnce
        /// The body's text around the token's quoted value.
        case split(prefix: [UInt8], suffix: [UInt8])
        /// No single token value to split at (a topic or condition send).
        case unsplittable
    }

    private struct Entry: Sendable {
        let notification: PushNotification
        var template: Template
    }

    /// How many recent notifications are kept.
    static let capacity = 2

    private let entries = Mutex<[Entry]>([])
    /// A token no real one equals, written where the token goes when a template is made.
    private let placeholder: String

    /// Creates an empty cache.
    init() {
        var generator = SystemRandomNumberGenerator()
        self.placeholder = "pushgate-token-" + (0..<4).map { _ in String(generator.next() as UInt64, radix: 16) }.joined()
    }

    /// The request body for `token`, or nil when the payload is not an FCM message object.
    func body(for notification: PushNotification, token: String) -> [UInt8]? {
        // A token with a byte JSON escapes is written the long way (real FCM tokens never have one).
        guard Self.needsNoEscape(token) else { return self.encode(notification, token: token) }
        let template = self.entries.withLock { entries -> Template? in
            guard let index = entries.firstIndex(where: { $0.notification == notification }) else { return nil }
            // Keep the caller's copy: the next token of the same notification then compares by identity
            // (the payload's storage), not key by key (an equal notification of another request, say).
            entries[index] = Entry(notification: notification, template: entries[index].template)
            return entries[index].template
        }
        switch template {
        case .split(let prefix, let suffix)?:
            return Self.assemble(prefix: prefix, token: token, suffix: suffix)
        case .unsplittable?:
            return self.encode(notification, token: token)
        case nil:
            let body = self.encode(notification, token: token)
            self.remember(notification, .seenOnce)
            return body
        case .seenOnce?:
            // Seen before: make the template.
            guard let withPlaceholder = self.encode(notification, token: self.placeholder) else { return nil }
            guard let split = Self.split(withPlaceholder, at: Array("\"\(self.placeholder)\"".utf8)) else {
                self.remember(notification, .unsplittable)
                return self.encode(notification, token: token)
            }
            self.remember(notification, .split(prefix: split.prefix, suffix: split.suffix))
            return Self.assemble(prefix: split.prefix, token: token, suffix: split.suffix)
        }
    }

    private func encode(_ notification: PushNotification, token: String) -> [UInt8]? {
        guard let message = FCMMessage.body(notification: notification, token: token) else { return nil }
        return try? JSONText.encode(message)
    }

    /// Records what is known of `notification`, most recent first.
    private func remember(_ notification: PushNotification, _ template: Template) {
        self.entries.withLock { entries in
            if let index = entries.firstIndex(where: { $0.notification == notification }) {
                entries[index].template = template
                return
            }
            entries.insert(Entry(notification: notification, template: template), at: 0)
            if entries.count > Self.capacity { entries.removeLast() }
        }
    }

    /// Whether JSON writes `token` as it is: printable ASCII other than `"` and `\`.
    static func needsNoEscape(_ token: String) -> Bool {
        token.utf8Count { $0 < 0x20 || $0 >= 0x7F || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") } == 0
    }

    /// The text before and after the only occurrence of `marker`; nil unless it occurs exactly once.
    static func split(_ text: [UInt8], at marker: [UInt8]) -> (prefix: [UInt8], suffix: [UInt8])? {
        var found: Int?
        var index = 0
        while index + marker.count <= text.count {
            if text[index] == marker[0], text[index..<(index + marker.count)].elementsEqual(marker) {
                if found != nil { return nil }
                found = index
                index += marker.count
            } else {
                index += 1
            }
        }
        guard let start = found else { return nil }
        return (Array(text[..<start]), Array(text[(start + marker.count)...]))
    }

    private static func assemble(prefix: [UInt8], token: String, suffix: [UInt8]) -> [UInt8] {
        var body: [UInt8] = []
        body.reserveCapacity(prefix.count + token.utf8.count + 2 + suffix.count)
        body += prefix
        body.append(UInt8(ascii: "\""))
        body += token.utf8
        body.append(UInt8(ascii: "\""))
        body += suffix
        return body
    }
}
