import PushgateCore

/// One entry of a Nextcloud server's `POST /notifications`: an encrypted, signed subject for one device.
///
/// The server sends exactly these fields (nextcloud/notifications `Push::encryptAndSign`); the subject and
/// signature are opaque to the proxy and pass to the device unchanged.
struct NextcloudNotificationEntry: Sendable, Equatable {
    /// How urgently the server wants it delivered.
    enum Priority: String, Sendable {
        case high, normal
    }

    /// What kind of push it is: a visible notification, a Talk call, or a silent delete.
    enum Kind: String, Sendable {
        case alert, voip, background
    }

    /// The device's identifier, as registered (base64 of a SHA-512 digest).
    let deviceIdentifier: String
    /// Lowercase hex SHA-512 of the push token the server believes the device has.
    let pushTokenHash: String
    /// Base64 of the subject ciphertext (RSA with the device key).
    let subject: String
    /// Base64 of the user key's PKCS#1 v1.5 SHA-512 signature over the ciphertext bytes.
    let signature: String
    let priority: Priority
    let kind: Kind

    /// Why an entry cannot be used.
    struct Malformed: Error, Equatable {
        let reason: String
    }

    /// Reads one entry from its JSON text.
    init(json: String) throws(Malformed) {
        guard case .object(let members)? = try? JSONParser.parse(Array(json.utf8)) else { throw Malformed(reason: "not a JSON object") }
        try self.init(object: members)
    }

    /// Reads one entry from a decoded JSON object. Unknown fields are ignored; a missing `priority` is
    /// normal and a missing `type` an alert, as servers before those fields existed sent.
    init(object: [String: JSONValue]) throws(Malformed) {
        func text(_ key: String) throws(Malformed) -> String {
            guard case .string(let value)? = object[key], !value.isEmpty else { throw Malformed(reason: "\(key) is missing or not a string") }
            return value
        }
        self.deviceIdentifier = try text("deviceIdentifier")
        self.pushTokenHash = try text("pushTokenHash").lowercased()
        self.subject = try text("subject")
        self.signature = try text("signature")
        switch object["priority"] {
        case nil: self.priority = .normal
        case .string(let value)?:
            guard let priority = Priority(rawValue: value) else { throw Malformed(reason: "priority must be high or normal") }
            self.priority = priority
        default: throw Malformed(reason: "priority must be a string")
        }
        switch object["type"] {
        case nil: self.kind = .alert
        case .string(let value)?:
            guard let kind = Kind(rawValue: value) else { throw Malformed(reason: "type must be alert, voip or background") }
            self.kind = kind
        default: throw Malformed(reason: "type must be a string")
        }
    }

    /// Creates an entry from its parts (tests, benchmarks).
    init(deviceIdentifier: String, pushTokenHash: String, subject: String, signature: String, priority: Priority, kind: Kind) {
        self.deviceIdentifier = deviceIdentifier
        self.pushTokenHash = pushTokenHash
        self.subject = subject
        self.signature = signature
        self.priority = priority
        self.kind = kind
    }
}
