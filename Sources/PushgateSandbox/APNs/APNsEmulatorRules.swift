import Foundation
import PushgateCore

/// How the APNs emulator judges one request: the checks APNs makes, in a fixed order, plus device
/// tokens whose first four hex digits ask for a failure.
///
/// | token prefix | answer |
/// |---|---|
/// | `dead` | 410 `Unregistered` |
/// | `bad0` | 400 `BadDeviceToken` |
/// | `4290` | 429 `TooManyRequests` (no `Retry-After`, as APNs) |
/// | `5000` | 500 `InternalServerError` |
/// | `5030` | 503 `ServiceUnavailable` |
/// | `e0e0` | 403 `ExpiredProviderToken` for the first request per device token (see ``APNsEmulator``) |
public struct APNsEmulatorRules: Sendable {
    /// What a request gets.
    public struct Verdict: Sendable, Equatable {
        /// The HTTP status.
        public var status: Int
        /// The `reason` of the JSON body; nil for 200.
        public var reason: String?

        /// 200, no body.
        public static let accepted = Verdict(status: 200, reason: nil)

        /// Creates a verdict.
        public init(status: Int, reason: String?) {
            self.status = status
            self.reason = reason
        }
    }

    /// The request as the rules see it.
    public struct Request: Sendable {
        /// The device token from the path.
        public var token: String
        /// Header values by lower-case name.
        public var headers: [String: String]
        /// The body.
        public var body: [UInt8]

        /// Creates a request.
        public init(token: String, headers: [String: String], body: [UInt8]) {
            self.token = token
            self.headers = headers
            self.body = body
        }
    }

    /// The `apns-push-type` values APNs knows.
    public static let pushTypes: Set<String> = [
        "alert", "background", "voip", "complication", "fileprovider", "mdm", "location", "liveactivity",
        "pushtotalk", "widgets", "controls",
    ]

    /// The push types that go to a topic of their own: the bundle id with this suffix.
    public static let topicSuffixes: [String: String] = [
        "voip": ".voip", "complication": ".complication", "fileprovider": ".pushkit.fileprovider", "liveactivity": ".push-type.liveactivity",
        "location": ".location-query", "pushtotalk": ".voip-ptt",
    ]

    /// The app's bundle id: the topic it accepts (`<bundle id>.voip` for VoIP).
    public let bundleID: String
    /// The topics the app accepts: the bundle id, alone and with each of ``topicSuffixes``.
    private let topics: Set<String>
    /// The topic of each push type that has a topic of its own.
    private let topicByPushType: [String: String]

    /// Creates the rules for one app.
    public init(bundleID: String) {
        self.bundleID = bundleID
        self.topicByPushType = Self.topicSuffixes.mapValues { bundleID + $0 }
        self.topics = Set(self.topicByPushType.values).union([bundleID])
    }

    /// Judges everything but the provider token (checked before, by ``APNsProviderTokenVerifier``).
    public func verdict(for request: Request) -> Verdict {
        let headers = request.headers
        let pushType = headers["apns-push-type"] ?? "alert"
        guard Self.pushTypes.contains(pushType) else { return .init(status: 400, reason: "InvalidPushType") }

        guard let topic = headers["apns-topic"], !topic.isEmpty else { return .init(status: 400, reason: "MissingTopic") }
        guard self.topics.contains(topic) else { return .init(status: 400, reason: "TopicDisallowed") }
        // A push type with a topic of its own goes to that topic only, and the VoIP topic takes VoIP only.
        if let own = self.topicByPushType[pushType] {
            guard topic == own else { return .init(status: 400, reason: "DeviceTokenNotForTopic") }
        } else if topic == self.topicByPushType["voip"] {
            return .init(status: 400, reason: "DeviceTokenNotForTopic")
        }

        let priority = headers["apns-priority"] ?? "10"
        guard priority == "10" || priority == "5" || priority == "1" else { return .init(status: 400, reason: "BadPriority") }
        if pushType == "background", priority != "5" { return .init(status: 400, reason: "BadPriority") }

        if let expiration = headers["apns-expiration"], Int64(expiration) == nil {
            return .init(status: 400, reason: "BadExpirationDate")
        }
        if let collapseID = headers["apns-collapse-id"], collapseID.utf8.count > 64 {
            return .init(status: 400, reason: "BadCollapseId")
        }
        if let apnsID = headers["apns-id"], !Self.isUUID(apnsID) {
            return .init(status: 400, reason: "BadMessageId")
        }

        guard Self.isWellFormed(token: request.token) else { return .init(status: 400, reason: "BadDeviceToken") }

        let limit = pushType == "voip" ? 5120 : 4096
        guard request.body.count <= limit else { return .init(status: 413, reason: "PayloadTooLarge") }
        // APNs takes any JSON object: one without `aps` (Sygnal's event_id_only form, an MDM push) and an
        // empty one (a Wallet pass update) are delivered. It has no reason for malformed JSON or an `aps`
        // that is not an object; PayloadEmpty is the closest it documents.
        guard !request.body.isEmpty, case .object(let object)? = try? JSONParser.parse(request.body) else {
            return .init(status: 400, reason: "PayloadEmpty")
        }
        if let aps = object["aps"] {
            guard case .object = aps else { return .init(status: 400, reason: "PayloadEmpty") }
        }

        switch request.token.lowercased().prefix(4) {
        case "dead": return .init(status: 410, reason: "Unregistered")
        case "bad0": return .init(status: 400, reason: "BadDeviceToken")
        case "4290": return .init(status: 429, reason: "TooManyRequests")
        case "5000": return .init(status: 500, reason: "InternalServerError")
        case "5030": return .init(status: 503, reason: "ServiceUnavailable")
        default: return .accepted
        }
    }

    /// Whether `token` looks like an APNs device token: 64 hex digits.
    public static func isWellFormed(token: String) -> Bool {
        token.utf8.count == 64 && token.utf8.allSatisfy { Hex.value(ofDigit: $0) != nil }
    }

    /// Whether `text` is a canonical UUID, as APNs wants `apns-id`: 36 characters, hyphens at offsets 8, 13,
    /// 18 and 23, hex digits of either case elsewhere. (Foundation's `UUID(uuidString:)` also takes a space
    /// or a sign for a digit, and its `sscanf` was a twentieth of the emulator's work per request.)
    public static func isUUID(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            bytes.count == 36 && bytes.indices.allSatisfy { offset in
                switch offset {
                case 8, 13, 18, 23: bytes[offset] == UInt8(ascii: "-")
                default: Hex.value(ofDigit: bytes[offset]) != nil
                }
            }
        }
    }

    /// Whether a token asks for one `ExpiredProviderToken` per provider token.
    public static func asksForExpiredProviderToken(_ token: String) -> Bool {
        token.lowercased().hasPrefix("e0e0")
    }
}
