import PushgateCore

/// The `error` of a log entry for a delivery outcome, as gorush shows its providers' errors: APNs'
/// reason (`Unregistered`, `BadDeviceToken`), FCM's error message.
enum GorushErrorText {
    static func text(for outcome: DeliveryOutcome, platform: GorushNotification.Platform) -> String? {
        switch outcome {
        case .delivered: return nil
        case .invalidToken(let reason), .rejected(let reason), .retryLater(_, let reason):
            guard platform == .android else { return reason }
            // FCM's messages for the token errors, which callers match to prune tokens.
            switch reason {
            case "UNREGISTERED": return "Requested entity was not found."
            case "SENDER_ID_MISMATCH": return "SenderId mismatch"
            default:
                if reason.hasPrefix("INVALID_ARGUMENT: the registration token") { return "The registration token is not a valid FCM registration token" }
                return reason
            }
        }
    }
}
