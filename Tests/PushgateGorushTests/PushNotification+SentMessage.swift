import PushgateCore
@testable import PushgateFCM
@testable import PushgateHMS

extension PushNotification {
    /// The `message` the FCM back end sends for this notification to token `t`, without the token: what
    /// FCM receives of what the front end built and stated.
    var fcmMessage: JSONValue? {
        guard case .object(let body)? = FCMMessage.body(notification: self, token: "t"), case .object(var message)? = body["message"] else { return nil }
        message["token"] = nil
        return .object(message)
    }

    /// The `message` the HMS back end sends for this notification to token `t`, without the token.
    var hmsMessage: JSONValue? {
        guard case .object(let body)? = HMSMessage.body(notification: self, token: "t"), case .object(var message)? = body["message"] else { return nil }
        message["token"] = nil
        return .object(message)
    }
}
