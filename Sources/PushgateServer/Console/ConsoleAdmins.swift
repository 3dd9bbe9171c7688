import Crypto
import PushgateConfig
import PushgateCore

/// The console's admin tokens, kept only as SHA-256 digests: a token is recognised by its digest, compared
/// in constant time, and named in logs and pages by its fingerprint (`t:…`) alone.
struct ConsoleAdmins: Sendable {
    /// Who a request acts as.
    struct Admin: Sendable, Equatable {
        /// The token's fingerprint, or `sandbox` for the sandbox's loopback access.
        var fingerprint: String
        /// Whether it may only look.
        var readOnly: Bool
    }

    private struct Entry: Sendable {
        var digest: [UInt8]
        var admin: Admin
    }

    private let entries: [Entry]

    /// Hashes the configured tokens; the settings are not kept.
    init(_ tokens: [ConsoleSettings.AdminToken]) {
        self.entries = tokens.map { token in
            Entry(digest: Self.digest(token.token), admin: Admin(fingerprint: Redaction.fingerprint(token.token), readOnly: token.readOnly))
        }
    }

    /// Whether `admin` is one of the configured tokens (with the same read-only flag).
    func contains(_ admin: Admin) -> Bool {
        self.entries.contains { $0.admin == admin }
    }

    /// Whether any token is configured.
    var isEmpty: Bool { self.entries.isEmpty }

    /// The admin a presented token belongs to, if any. Every configured digest is compared, whatever
    /// matches, so the time taken does not tell which one matched.
    func admin(presenting token: String) -> Admin? {
        let presented = Self.digest(token)
        var found: Admin?
        for entry in self.entries where Self.constantTimeEqual(entry.digest, presented) {
            found = entry.admin
        }
        return found
    }

    static func digest(_ text: String) -> [UInt8] {
        Array(SHA256.hash(data: Array(text.utf8)))
    }

    /// Compares two byte strings of equal length without stopping at the first difference.
    static func constantTimeEqual(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var difference: UInt8 = 0
        for index in lhs.indices { difference |= lhs[index] ^ rhs[index] }
        return difference == 0
    }
}
