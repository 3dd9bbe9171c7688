public import PushgateCore

/// The per-app keys of `sygnal.yaml` that shape Matrix notifications (the back end reads the rest).
public struct MatrixAppOptions: Sendable, Equatable {
    /// `send_badge_counts` (APNs and FCM; default true).
    public var sendBadgeCounts: Bool
    /// `convert_device_token_to_hex` (APNs; default true): pushkeys are base64 and APNs wants hex.
    public var convertDeviceTokenToHex: Bool
    /// `push_type` (APNs): the `apns-push-type` of every notification, as Sygnal sends it; nil: `alert`.
    public var apnsPushType: String?
    /// `fcm_options` (FCM): the base every message is merged over, as Sygnal's v1 mode builds it (the
    /// message's own members, `android.priority` among them, win).
    public var fcmOptions: [String: JSONValue]

    /// Creates options; the defaults are Sygnal's.
    public init(
        sendBadgeCounts: Bool = true, convertDeviceTokenToHex: Bool = true, apnsPushType: String? = nil, fcmOptions: [String: JSONValue] = [:]
    ) {
        self.sendBadgeCounts = sendBadgeCounts
        self.convertDeviceTokenToHex = convertDeviceTokenToHex
        self.apnsPushType = apnsPushType
        self.fcmOptions = fcmOptions
    }
}
