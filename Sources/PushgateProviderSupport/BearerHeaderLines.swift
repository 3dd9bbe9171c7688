import Synchronization

/// A back end's message headers ending in `Authorization: Bearer <access token>`, made once for each
/// access token (FCM and HMS send the same headers with every message until the token is renewed).
public final class BearerHeaderLines: Sendable {
    private let fixed: HTTP1HeaderLines
    private let current = Mutex<(accessToken: String, lines: HTTP1HeaderLines)?>(nil)

    /// Headers that come before `Authorization` in every message.
    public init(fixed: HTTP1HeaderLines) {
        self.fixed = fixed
    }

    /// The fixed headers and `Authorization: Bearer <accessToken>`.
    /// - Throws: ``HTTP1ExchangeError/refused(_:)`` when the token holds a line break or NUL.
    public func lines(for accessToken: String) throws(HTTP1ExchangeError) -> HTTP1HeaderLines {
        if let current = self.current.withLock({ $0 }), current.accessToken == accessToken { return current.lines }
        var lines = self.fixed
        try lines.append(name: "Authorization", value: "Bearer " + accessToken)
        self.current.withLock { $0 = (accessToken, lines) }
        return lines
    }
}
