import PushgateConfig

/// Who may use the gorush routes: a caller with one of `auth_tokens` as its bearer token (limited to
/// that token's apps), or, with `allow_unauthenticated`, a caller that sends no `Authorization` or one of
/// another scheme than Bearer (a reverse proxy's basic authentication, passed on).
struct GorushAuthenticator: Sendable {
    /// What a request may do.
    enum Verdict: Equatable {
        /// Allowed, through these apps only (nil: any).
        case allowed(apps: Set<String>?)
        /// Refused, with the reason for the 401 answer.
        case refused(String)
    }

    private let tokens: [GorushSettings.AuthToken]
    private let allowUnauthenticated: Bool

    init(settings: GorushSettings) {
        self.tokens = settings.authTokens
        self.allowUnauthenticated = settings.allowUnauthenticated
    }

    /// Judges an `Authorization` header value.
    func verdict(authorization: String?) -> Verdict {
        guard let authorization, !authorization.isEmpty else {
            return self.allowUnauthenticated ? .allowed(apps: nil) : .refused("Missing bearer token.")
        }
        let parts = authorization.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else {
            // Another scheme is not meant for the gateway: a reverse proxy's basic authentication (gorush's
            // advice for securing it) passes its header on. Where callers need no token, it is no token.
            return self.allowUnauthenticated ? .allowed(apps: nil) : .refused("Invalid authorization header.")
        }
        let presented = Array(parts[1].trimmingPrefix(" ").utf8)
        // Every configured token is compared in full, so the time taken says nothing of which matched.
        var match: GorushSettings.AuthToken?
        for entry in self.tokens where Self.constantTimeEqual(Array(entry.token.utf8), presented) && match == nil {
            match = entry
        }
        guard let match else { return .refused("Invalid bearer token.") }
        return .allowed(apps: match.apps)
    }

    private static func constantTimeEqual(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        var difference = UInt8(truncatingIfNeeded: lhs.count ^ rhs.count)
        for index in 0..<max(lhs.count, rhs.count) {
            let left = index < lhs.count ? lhs[index] : 0
            let right = index < rhs.count ? rhs[index] : 0
            difference |= left ^ right
        }
        return difference == 0
    }
}
