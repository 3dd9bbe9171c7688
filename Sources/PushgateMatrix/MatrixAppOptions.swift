/// The per-app keys of `sygnal.yaml` that shape Matrix payloads (the back end reads the rest).
public struct MatrixAppOptions: Sendable, Equatable {
    /// `send_badge_counts` (APNs and FCM; default true).
    public var sendBadgeCounts: Bool
    /// `convert_device_token_to_hex` (APNs; default true): pushkeys are base64 and APNs wants hex.
    public var convertDeviceTokenToHex: Bool

    /// Creates options; the defaults are Sygnal's.
    public init(sendBadgeCounts: Bool = true, convertDeviceTokenToHex: Bool = true) {
        self.sendBadgeCounts = sendBadgeCounts
        self.convertDeviceTokenToHex = convertDeviceTokenToHex
    }
}
