public import Foundation

/// How the device signs in to one Nextcloud account: the server's address, the login name and an app
/// password (from Login Flow v2 or the account's security settings).
///
/// The server registers push devices only for app-password logins; a plain password login gets
/// 400 `INVALID_SESSION_TOKEN`. The password never appears in ``description``.
public struct NextcloudCredentials: Sendable, Hashable {
    /// The server's base URL, including any sub-directory Nextcloud is installed in, for example
    /// `https://cloud.example.com` or `https://example.com/nextcloud/`. A trailing `/` is allowed.
    public var server: URL
    /// The login name.
    public var login: String
    /// The app password. Treat it as a secret.
    public var appPassword: String

    /// Describes one account's sign-in.
    public init(server: URL, login: String, appPassword: String) {
        self.server = server
        self.login = login
        self.appPassword = appPassword
    }
}

extension NextcloudCredentials: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The server and login, with the app password left out.
    public var description: String { "NextcloudCredentials(server: \(self.server.absoluteString), login: \(self.login))" }
    /// The server and login, with the app password left out.
    public var debugDescription: String { self.description }
    /// The server and login, with the app password left out.
    public var customMirror: Mirror { Mirror(self, children: ["server": self.server, "login": self.login]) }
}
