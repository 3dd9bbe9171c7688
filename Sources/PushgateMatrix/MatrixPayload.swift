public import PushgateCore

/// What a payload builder decided for one device.
public enum MatrixPayload: Sendable, Equatable {
    /// Send this provider-ready body.
    case send(JSONValue)
    /// Send nothing, and do not reject the pushkey (nothing to show, or filtered out).
    case skip(reason: String)
    /// Reject the pushkey: the pusher is unusable (the homeserver deletes it).
    case reject(reason: String)
}

/// Text helpers shared by the payload builders.
enum MatrixText {
    /// The first `limit` Unicode code points of `text`.
    static func prefix(_ text: String, codePoints limit: Int) -> String {
        // No more UTF-8 bytes than the limit means no more code points (the byte count is at hand; the
        // code-point count takes a walk over the text).
        guard text.utf8.count > limit else { return text }
        let scalars = text.unicodeScalars
        guard scalars.count > limit else { return text }
        var view = String.UnicodeScalarView()
        view.append(contentsOf: scalars.prefix(limit))
        return String(view)
    }

    /// `text` cut to at most `limit` UTF-8 bytes: when longer, the first `limit - 3` bytes (whole code
    /// points) followed by `…`.
    static func truncated(_ text: String, utf8Bytes limit: Int) -> String {
        guard text.utf8.count > limit else { return text }
        var view = String.UnicodeScalarView()
        var used = 0
        for scalar in text.unicodeScalars {
            let size = String(scalar).utf8.count
            if used + size > limit - 3 { break }
            view.append(scalar)
            used += size
        }
        return String(view) + "…"
    }

    /// A non-empty string, or nil.
    static func nonEmpty(_ text: String?) -> String? {
        guard let text, !text.isEmpty else { return nil }
        return text
    }
}
