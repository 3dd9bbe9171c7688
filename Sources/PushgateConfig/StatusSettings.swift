import Foundation

/// The `status` section: a Status push notification server (16/PUSH-NOTIFICATION-SERVER) reached through a
/// Waku node's REST API.
///
/// ```yaml
/// status:
///   waku_rest_url: http://127.0.0.1:8645   # the Waku node's REST API (nwaku or go-waku)
///   pubsub_topic: /waku/2/rs/16/32          # the Status shard
///   identity_key_file: status-identity.hex  # 32-byte secp256k1 secret as hex (0x optional); absent: kept in the store
///   ios_app: im.status.ethereum             # the APNs app (a registration's apn_topic equal to another APNs app's topic picks that app)
///   android_app: im.status.ethereum.fcm     # the FCM app
///   payload_style: current                  # current | legacy: the gorush payload generation devices get
///   gorush_url: ''                          # forward to this gorush as status-go does, instead of delivering
///   texts: {message: …, mention: …, community_request: …, contact_request: …}
///   poll_interval_ms: 100                   # pause between polls that found nothing
///   request_timeout: 5                      # seconds per Waku REST request; polls wait at least 60
///   seen_retention_days: 30                 # how long processed message ids are remembered
///   waku_cache_capacity: 50                 # the node's --rest-relay-cache-capacity: a poll this full may have lost messages
///   backfill_window_minutes: 60             # how far back the store is asked for missed messages; 0: never
/// ```
public struct StatusSettings: Sendable, Equatable {
    /// Which gorush payload generation devices get.
    public enum PayloadStyle: String, Sendable, Equatable, CaseIterable {
        /// status-go since 2025: alert texts, content-available, sound, high priority and a deep link on APNs.
        case current
        /// status-go before: the alert text and the three data keys only.
        case legacy
    }

    /// The notification texts, one per notification type.
    public struct Texts: Sendable, Equatable {
        public var message: String
        public var mention: String
        public var communityRequest: String
        public var contactRequest: String

        /// The texts of a payload style, as status-go sends them.
        public static func defaults(for style: PayloadStyle) -> Texts {
            switch style {
            case .current:
                Texts(
                    message: "New message in Messenger", mention: "New mention or reply in Communities",
                    communityRequest: "Someone requested to join a community you are an admin of", contactRequest: "Someone sent you a contact request"
                )
            case .legacy:
                Texts(
                    message: "You have a new message", mention: "Someone mentioned you",
                    communityRequest: "Someone requested to join a community you are an admin of", contactRequest: "Someone sent you a contact request"
                )
            }
        }
    }

    /// The Waku node's REST API base URL.
    public var wakuRESTURL: String
    /// The pubsub topic (shard) to subscribe and publish on.
    public var pubsubTopic = "/waku/2/rs/16/32"
    /// A file holding the server's secret key as hex; nil: generated once and kept in the store.
    public var identityKeyFile: String?
    /// The APNs app for APN_TOKEN registrations.
    public var iosApp: String?
    /// The FCM app for FIREBASE_TOKEN registrations.
    public var androidApp: String?
    /// The payload generation.
    public var payloadStyle = PayloadStyle.current
    /// A gorush to forward to instead of delivering.
    public var gorushURL: String?
    /// The alert texts.
    public var texts = Texts.defaults(for: .current)
    /// The pause after a poll that returned nothing.
    public var pollInterval: Duration = .milliseconds(100)
    /// The deadline of one Waku REST request. A poll waits at least 60 s whatever this is: the node empties
    /// its cache as it answers, so an answer not waited for would be lost.
    public var requestTimeout: Duration = .seconds(5)
    /// How long processed message ids are remembered.
    public var seenRetention: Duration = .seconds(30 * 86_400)
    /// How many messages the node's relay cache holds (nwaku's `--rest-relay-cache-capacity`, default 50):
    /// a poll returning this many may have lost some to eviction, so the store is asked for them.
    public var wakuCacheCapacity = 50
    /// How far back, at most, the node's store is asked for messages the polls missed (at start-up, after
    /// a full cache or a gap in polling); zero turns catching up from the store off.
    public var backfillWindow: Duration = .seconds(3_600)

    /// Settings for a node at `wakuRESTURL`, defaults elsewhere.
    public init(wakuRESTURL: String) {
        self.wakuRESTURL = wakuRESTURL
    }

    static let knownKeys: Set<String> = [
        "waku_rest_url", "pubsub_topic", "identity_key_file", "ios_app", "android_app", "payload_style", "gorush_url", "texts",
        "poll_interval_ms", "request_timeout", "seen_retention_days", "waku_cache_capacity", "backfill_window_minutes",
    ]

    init(_ section: ConfigSection, warnings: inout [String]) throws {
        guard let url = try section.string("waku_rest_url"), !url.isEmpty else {
            throw ConfigurationError(key: section.keyPath("waku_rest_url"), "is required: the REST API of the Waku node the server talks through")
        }
        self.wakuRESTURL = try Self.httpURL(url, key: section.keyPath("waku_rest_url"))
        if let topic = try section.string("pubsub_topic") {
            guard Self.isStaticShardTopic(topic) else {
                throw ConfigurationError(key: section.keyPath("pubsub_topic"), "must be a static-sharding pubsub topic /waku/2/rs/<cluster>/<shard>")
            }
            self.pubsubTopic = topic
        }
        if let file = try section.string("identity_key_file"), !file.isEmpty { self.identityKeyFile = file }
        self.iosApp = try section.string("ios_app")
        self.androidApp = try section.string("android_app")
        if let style = try section.string("payload_style") {
            guard let parsed = PayloadStyle(rawValue: style) else {
                throw ConfigurationError(key: section.keyPath("payload_style"), "must be current or legacy")
            }
            self.payloadStyle = parsed
        }
        self.texts = Texts.defaults(for: self.payloadStyle)
        if let gorush = try section.string("gorush_url"), !gorush.isEmpty {
            self.gorushURL = try Self.httpURL(gorush, key: section.keyPath("gorush_url"))
        }
        if let texts = try section.section("texts") {
            self.texts.message = try texts.string("message") ?? self.texts.message
            self.texts.mention = try texts.string("mention") ?? self.texts.mention
            self.texts.communityRequest = try texts.string("community_request") ?? self.texts.communityRequest
            self.texts.contactRequest = try texts.string("contact_request") ?? self.texts.contactRequest
            warnings += texts.unknownKeys(known: ["message", "mention", "community_request", "contact_request"]).map { "unknown key \($0) (ignored)" }
        }
        self.pollInterval = .milliseconds(try section.int("poll_interval_ms", in: 0...60_000) ?? 100)
        self.requestTimeout = .seconds(try section.int("request_timeout", in: 1...120) ?? 5)
        self.seenRetention = .seconds(86_400 * (try section.int("seen_retention_days", in: 1...3650) ?? 30))
        self.wakuCacheCapacity = try section.int("waku_cache_capacity", in: 1...10_000_000) ?? 50
        self.backfillWindow = .seconds(60 * (try section.int("backfill_window_minutes", in: 0...10_080) ?? 60))
        // Marks forgotten before the window ends would let the backfill take their messages again:
        // duplicate notifications days late, registrations answered as version mismatches.
        guard self.backfillWindow < self.seenRetention else {
            throw ConfigurationError(
                key: section.keyPath("backfill_window_minutes"),
                "must be shorter than seen_retention_days (messages caught up from the store must still be remembered as handled)"
            )
        }
        if self.iosApp == nil && self.androidApp == nil && self.gorushURL == nil {
            warnings.append("\(section.path): neither ios_app, android_app nor gorush_url is set, so registrations are accepted but nothing is delivered")
        }
        warnings += section.unknownKeys(known: Self.knownKeys).map { "unknown key \($0) (ignored)" }
    }

    /// Whether `topic` is `/waku/2/rs/<cluster>/<shard>` with decimal numbers.
    public static func isStaticShardTopic(_ topic: String) -> Bool {
        let parts = topic.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 6, parts[0].isEmpty, parts[1] == "waku", parts[2] == "2", parts[3] == "rs" else { return false }
        return [parts[4], parts[5]].allSatisfy { !$0.isEmpty && $0.count <= 5 && $0.allSatisfy(\.isASCIIDigitCharacter) }
    }

    private static func httpURL(_ url: String, key: String) throws -> String {
        guard let parsed = URL(string: url), ["http", "https"].contains(parsed.scheme?.lowercased() ?? ""), parsed.host?.isEmpty == false else {
            throw ConfigurationError(key: key, "must be an http:// or https:// URL")
        }
        return url.hasSuffix("/") ? String(url.dropLast()) : url
    }
}

extension Character {
    fileprivate var isASCIIDigitCharacter: Bool { ("0"..."9").contains(self) }
}
