import PushgateCore

/// One entry of a gorush `POST /api/push` body, with gorush's field names and types (see
/// ``GorushRequestReader`` for how the JSON is read). Absent fields have gorush's zero values.
struct GorushNotification: Sendable, Equatable {
    /// gorush's platform numbers.
    enum Platform: Int, Sendable {
        case ios = 1
        case android = 2
        case huawei = 3

        /// The name log entries use.
        var name: String {
            switch self {
            case .ios: "ios"
            case .android: "android"
            case .huawei: "huawei"
            }
        }
    }

    // Common
    var notifID = ""
    var to = ""
    var topic = ""
    var tokens: [String] = []
    var platform = 0
    var message = ""
    var title = ""
    var image = ""
    var priority = ""
    var contentAvailable = false
    var mutableContent = false
    var sound: JSONValue?
    var data: [String: JSONValue] = [:]
    var retry = 0
    /// Pushgate's extension: the app to deliver through, by id.
    var app = ""

    // Android (FCM), passed into the FCM v1 message as firebase-admin-go writes them (``GorushFCMSections``).
    var notification: [String: JSONValue]?
    var android: [String: JSONValue]?
    /// `android.ttl` in nanoseconds, as firebase-admin-go holds it (checked before sending).
    var androidTTL: Int64?
    var webpush: [String: JSONValue]?
    var apns: [String: JSONValue]?
    var fcmOptions: [String: JSONValue]?
    var condition = ""

    // Huawei (HMS)
    var huaweiNotification: [String: JSONValue]?
    var huaweiData = ""
    var huaweiCollapseKey = 0
    var huaweiTTL = ""
    var biTag = ""
    var fastAppTarget = 0

    // iOS (APNs)
    var expiration: Int64?
    var apnsID = ""
    var collapseID = ""
    var pushType = ""
    var badge: Int?
    var category = ""
    var threadID = ""
    var urlArgs: [String] = []
    var alert: [String: JSONValue] = [:]
    var production = false
    var development = false
    var soundName = ""
    var soundVolume = 0.0
    var interruptionLevel = ""
    var contentState: [String: JSONValue] = [:]
    var staleDate: Int64 = 0
    var dismissalDate: Int64 = 0
    var event = ""
    var timestamp: Int64 = 0
    var attributesType = ""
    var attributes: [String: JSONValue] = [:]
    var relevanceScore: Double?

    /// The platform, when gorush knows it.
    var knownPlatform: Platform? { Platform(rawValue: self.platform) }

    /// Whether this is an FCM or HMS topic or condition send (as gorush's `IsTopic`).
    var isTopicSend: Bool {
        (self.platform == Platform.android.rawValue || self.platform == Platform.huawei.rawValue) && (!self.topic.isEmpty || !self.condition.isEmpty)
    }

    /// Whether gorush has anyone to send it to: a token, or for FCM and HMS also `to`, a topic or a
    /// condition (`notify/notification.go` `CheckMessage`, which `PushToIOS` does not call).
    var hasTarget: Bool {
        guard self.tokens.isEmpty else { return true }
        return self.platform != Platform.ios.rawValue && (!self.to.isEmpty || self.isTopicSend)
    }

    /// The targets gorush counts in `counts`: the tokens, plus one for a topic.
    var countedTargets: Int {
        self.tokens.count + (self.topic.isEmpty ? 0 : 1)
    }
}
