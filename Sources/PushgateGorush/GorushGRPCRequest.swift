import PushgateCore
import SwiftProtobuf

/// A gRPC `NotificationRequest` as the notification of an HTTP request, mapped as gorush maps it: the
/// priority enum lower-cased (so `NORMAL`, the default, is `normal`), a badge only when positive, the
/// alert's fields under their JSON names, `data` from its `Struct`, `fcmOptions` as `fcm_options`.
enum GorushGRPCRequest {
    static func notification(from request: Proto_NotificationRequest) -> GorushNotification {
        var notification = GorushNotification()
        notification.notifID = request.id
        notification.platform = Int(request.platform)
        notification.tokens = request.tokens
        notification.message = request.message
        notification.title = request.title
        notification.topic = request.topic
        notification.category = request.category
        if !request.sound.isEmpty { notification.sound = .string(request.sound) }
        notification.contentAvailable = request.contentAvailable
        notification.threadID = request.threadID
        notification.mutableContent = request.mutableContent
        notification.image = request.image
        notification.priority = request.priority == .high ? "high" : "normal"
        notification.pushType = request.pushType
        notification.development = request.development
        if request.badge > 0 { notification.badge = Int(request.badge) }
        if request.hasAlert {
            let alert = request.alert
            let strings = [
                ("title", alert.title), ("body", alert.body), ("subtitle", alert.subtitle), ("action", alert.action),
                ("action-loc-key", alert.actionLocKey), ("launch-image", alert.launchImage), ("loc-key", alert.locKey),
                ("title-loc-key", alert.titleLocKey),
            ]
            for (key, value) in strings where !value.isEmpty { notification.alert[key] = .string(value) }
            if !alert.locArgs.isEmpty { notification.alert["loc-args"] = .array(alert.locArgs.map(JSONValue.string)) }
            if !alert.titleLocArgs.isEmpty { notification.alert["title-loc-args"] = .array(alert.titleLocArgs.map(JSONValue.string)) }
        }
        if request.hasData { notification.data = request.data.fields.mapValues(Self.json) }
        // firebase-admin-go's `FCMOptions` leaves an empty label out (`omitempty`).
        if request.hasFcmOptions {
            let label = request.fcmOptions.analyticsLabel
            notification.fcmOptions = label.isEmpty ? [:] : ["analytics_label": .string(label)]
        }
        return notification
    }

    /// Whether every number in `value` is finite: a protobuf `Value` can carry NaN and infinities, which
    /// JSON (and so every provider's payload) cannot.
    static func isFinite(_ value: Google_Protobuf_Value) -> Bool {
        switch value.kind {
        case .numberValue(let number)?: number.isFinite
        case .structValue(let object)?: object.fields.values.allSatisfy(Self.isFinite)
        case .listValue(let list)?: list.values.allSatisfy(Self.isFinite)
        case .nullValue?, .stringValue?, .boolValue?, nil: true
        }
    }

    /// A protobuf `Value` as JSON.
    static func json(_ value: Google_Protobuf_Value) -> JSONValue {
        switch value.kind {
        case .nullValue?, nil: .null
        case .numberValue(let number)?: .number(number)
        case .stringValue(let text)?: .string(text)
        case .boolValue(let flag)?: .bool(flag)
        case .structValue(let object)?: .object(object.fields.mapValues(Self.json))
        case .listValue(let list)?: .array(list.values.map(Self.json))
        }
    }
}
