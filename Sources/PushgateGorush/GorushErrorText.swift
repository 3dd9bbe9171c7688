import PushgateCore

/// The `error` of a log entry for a delivery outcome, as gorush shows its providers' errors: for APNs the
/// bare reason (`Unregistered`, `PayloadTooLarge`: `notify/notification_apns.go` `PushToIOS` logs
/// `errors.New(res.Reason)`), for FCM the message of Google's error answer (firebase-admin-go's
/// `FirebaseError` text, which `PushToAndroid` logs) where Pushgate knows it. Huawei's refusals keep
/// Pushgate's reason (its code and a fixed text): gorush lists none (`PushToHuawei` only counts them).
enum GorushErrorText {
    /// The entry's `error`, or nil for a delivery.
    static func text(for outcome: DeliveryOutcome, platform: GorushNotification.Platform) -> String? {
        switch outcome {
        case .delivered: return nil
        case .invalidToken(let reason), .rejected(let reason), .retryLater(_, let reason), .credentialsRefused(let reason):
            switch platform {
            case .ios: return Self.apnsReason(reason)
            case .android: return Self.fcmMessage(reason)
            case .huawei: return reason
            }
        }
    }

    /// APNs' reason alone. Pushgate's refusals before sending (an oversized payload, a collapse id APNs
    /// would refuse) name the reason APNs would give, then explain after a colon: the explanation goes.
    static func apnsReason(_ reason: String) -> String {
        guard let colon = reason.firstIndex(of: ":") else { return reason }
        let name = reason[..<colon]
        // APNs' reasons are one word in upper camel case (`BadCollapseId`); Pushgate's own texts are not.
        let isUpper = { (byte: UInt8) in (0x41...0x5A).contains(byte) }
        let isLetter = { (byte: UInt8) in isUpper(byte) || (0x61...0x7A).contains(byte) }
        guard let first = name.utf8.first, isUpper(first), name.utf8.allSatisfy(isLetter) else { return reason }
        return String(name)
    }

    /// Google's message for the token errors callers match to prune tokens; Pushgate's description of
    /// any other error (Google's other messages can quote the message's content, so Pushgate keeps none).
    static func fcmMessage(_ reason: String) -> String {
        switch reason {
        case "UNREGISTERED": return "Requested entity was not found."
        case "SENDER_ID_MISMATCH": return "SenderId mismatch"
        default:
            if reason.hasPrefix("INVALID_ARGUMENT: the registration token") { return "The registration token is not a valid FCM registration token" }
            return reason
        }
    }
}
