import Foundation
public import PushgateCore

/// Turns `pushgate send`'s flags into each provider's notification, and its outcome into JSON.
public struct SendMessage: Sendable {
    public let alert: String?
    public let data: [String: JSONValue]
    public let kind: PushKind
    /// The `--priority` given, nil when left out (then no provider is sent one).
    public let priority: PushPriority?

    /// Creates a message.
    public init(alert: String?, data: [String: JSONValue], kind: PushKind, priority: PushPriority?) {
        self.alert = alert
        self.data = data
        self.kind = kind
        self.priority = priority
    }

    public func notification(for platform: Platform) -> PushNotification {
        let payload: JSONValue
        switch platform {
        case .apns:
            var body = self.data
            var aps: [String: JSONValue] = [:]
            if let alert { aps["alert"] = .string(alert) }
            if self.kind == .background { aps["content-available"] = 1 }
            body["aps"] = .object(aps)
            payload = .object(body)
        case .fcm:
            var message: [String: JSONValue] = [:]
            if let alert { message["notification"] = ["body": .string(alert)] }
            if !self.data.isEmpty {
                message["data"] = .object(self.data.mapValues { value in
                    value.stringValue.map(JSONValue.string) ?? .string((try? value.encoded()).map { String(decoding: $0, as: UTF8.self) } ?? "")
                })
            }
            payload = .object(message)
        case .hms:
            // HMS: `data` is one string (the JSON text); a notification needs a click action (3: open the app).
            var message: [String: JSONValue] = [:]
            if let alert { message["android"] = ["notification": ["body": .string(alert), "click_action": ["type": 3]]] }
            if !self.data.isEmpty, let text = try? JSONValue.object(self.data).encoded() { message["data"] = .string(String(decoding: text, as: UTF8.self)) }
            payload = .object(message)
        case .webPush, .webhook, .unifiedPush:
            var body = self.data
            if let alert { body["body"] = .string(alert) }
            payload = .object(body)
        }
        // A stated priority is normal for a background notification, as APNs requires.
        return PushNotification(kind: self.kind, priority: self.kind == .background ? self.priority.map { _ in .normal } : self.priority, payload: payload)
    }

    public static func report(app: String, outcome: DeliveryOutcome) -> String {
        var object: [String: JSONValue] = ["app": .string(app), "outcome": .string(outcome.label)]
        switch outcome {
        case .delivered: break
        case .invalidToken(let reason), .rejected(let reason), .credentialsRefused(let reason): object["reason"] = .string(reason)
        case .retryLater(let after, let reason):
            object["reason"] = .string(reason)
            if let after { object["retry_after_seconds"] = .number(Double(after.components.seconds)) }
        }
        return (try? JSONValue.object(object).encoded()).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}
