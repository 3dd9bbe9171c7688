import Crypto
import Foundation

/// Turns secrets (device tokens, keys, payloads) into values that are safe to log.
///
/// A fingerprint is stable, so the same token can be followed across log lines, but it does not reveal the
/// token: it is the first 12 hex digits of the SHA-256 of the value.
///
/// ```swift
/// logger.info("delivered", metadata: ["token": "\(Redaction.fingerprint(token))"])
/// ```
public enum Redaction {
    /// A short, stable, non-reversible fingerprint of a secret value, such as `t:3f9a0c12ab45`.
    /// - Parameter secret: the token, key or other value that must not be logged.
    /// - Returns: `t:` followed by 12 lowercase hex digits.
    public static func fingerprint(_ secret: String) -> String {
        let digest = SHA256.hash(data: Data(secret.utf8))
        return "t:" + digest.prefix(6).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }

    /// A service's URL as it may be shown (a Waku node, gorush, a provider's base URL): its user name and
    /// password become `***`, and its query and fragment `?…`, since either may carry a credential; the
    /// scheme, host, port and path stay, so an operator can tell which service is meant.
    /// - Parameter url: a URL such as `https://user:secret@gorush.example/api/push?token=…`.
    /// - Returns: `https://***@gorush.example/api/push?…` for that one; a value that is not an absolute URL
    ///   with a host is not shown at all.
    public static func displayURL(_ url: String) -> String {
        guard let components = URLComponents(string: url), let scheme = components.scheme, let host = components.percentEncodedHost,
            !host.isEmpty
        else { return "(not a URL with a host; not shown)" }
        var shown = scheme + "://"
        if components.percentEncodedUser != nil || components.percentEncodedPassword != nil { shown += "***@" }
        shown += host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        if let port = components.port { shown += ":\(port)" }
        shown += components.percentEncodedPath
        if components.percentEncodedQuery != nil || components.percentEncodedFragment != nil { shown += "?…" }
        return shown
    }

    /// Replaces the password of a database or proxy URL with `***`, for display.
    /// - Parameter url: a URL such as `postgres://user:secret@host/db`.
    /// - Returns: the same URL with its password masked; the input unchanged when it has none.
    public static func maskingPassword(in url: String) -> String {
        guard let schemeEnd = url.range(of: "://"),
            let at = url[schemeEnd.upperBound...].lastIndex(of: "@")
        else { return url }
        let userInfo = url[schemeEnd.upperBound..<at]
        guard let colon = userInfo.firstIndex(of: ":") else { return url }
        return String(url[..<colon]) + ":***" + String(url[at...])
    }
}
