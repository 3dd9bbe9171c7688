import Crypto
public import Foundation

/// What one of an app's credentials says about itself, read at start: who it is (key id, team, project,
/// subject, a fingerprint of its public part) and, for certificates, until when it is valid. Never key
/// material.
public struct ProviderCredential: Sendable, Equatable {
    /// Which credential of an app.
    public enum Kind: String, Sendable, CaseIterable {
        /// An APNs client certificate (`certfile`).
        case apnsCertificate = "apns_certificate"
        /// An APNs signing key (`.p8`: `keyfile`, `key_id`, `team_id`).
        case apnsKey = "apns_key"
        /// Extra trust anchors for the provider's TLS (`ca_file`).
        case caFile = "ca_file"
        /// A Google service-account key (`service_account_file`).
        case fcmServiceAccount = "fcm_service_account"
        /// A VAPID signing key (`vapid_private_key`).
        case vapidKey = "vapid_key"
        /// A Huawei app secret (`app_secret`, `app_secret_file`).
        case hmsAppSecret = "hms_app_secret"
    }

    /// The app it belongs to.
    public let appID: String
    /// Which credential.
    public let kind: Kind
    /// The file it was read from, when it has one.
    public let file: String?
    /// Who it is, for people: `key id …, team …, key sha256:…`, `subject …, serial …`; never a secret.
    public let identity: String
    /// When it stops being valid (certificates: their `notAfter`; for a CA file, the first of its
    /// certificates to expire); nil for keys, which carry no date.
    public let notAfter: Date?

    /// Creates a description of a credential.
    public init(appID: String, kind: Kind, file: String?, identity: String, notAfter: Date?) {
        self.appID = appID
        self.kind = kind
        self.file = file
        self.identity = identity
        self.notAfter = notAfter
    }

    /// `sha256:` and the first 16 hex digits of the SHA-256 of `bytes`: of a public key's or a
    /// certificate's DER, a stable name that gives nothing away.
    public static func fingerprint(of bytes: some DataProtocol) -> String {
        let digest = SHA256.hash(data: Data(bytes))
        return "sha256:" + digest.prefix(8).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }

    /// One line for `check-config` and the log: `<kind>: <identity>[, valid until <date>][ (<file>)]`.
    public var summary: String {
        var line = "\(self.kind.rawValue): \(self.identity)"
        if let notAfter { line += ", valid until \(UTCTime.rfc3339(notAfter))" }
        return line
    }
}
