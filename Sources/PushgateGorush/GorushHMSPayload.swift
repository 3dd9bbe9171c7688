import PushgateCore

/// The Huawei Push Kit message gorush would send for a platform-3 notification, without its recipient:
/// `android` with `urgency` (HIGH for `priority: high`, else NORMAL), `ttl` (`huawei_ttl`, default one
/// day), `collapse_key`, `category`, `bi_tag` and `fast_app_target`; `data` from `huawei_data`; and
/// `android.notification` from `huawei_notification` and `title`/`message`/`image`/`sound`, with the
/// defaults Huawei's SDK gives a notification (default sound, vibration and light, a click action that
/// opens the app).
enum GorushHMSPayload {
    static func notification(for request: GorushNotification, toTopic: Bool = false) -> PushNotification {
        let ttl = request.huaweiTTL.isEmpty ? "86400s" : request.huaweiTTL
        var android: [String: JSONValue] = ["urgency": request.priority == "high" ? "HIGH" : "NORMAL"]
        // Whole seconds are stated rather than set in the payload, so that a retry from the outbox sends
        // what is left of them; the HMS back end writes them back as they came (`86400s`). Any other text
        // goes to Huawei as given.
        let timeToLive = Self.wholeSeconds(ttl)
        if timeToLive == nil { android["ttl"] = .string(ttl) }
        if request.huaweiCollapseKey != 0 { android["collapse_key"] = .number(Double(request.huaweiCollapseKey)) }
        if !request.category.isEmpty { android["category"] = .string(request.category) }
        if !request.biTag.isEmpty { android["bi_tag"] = .string(request.biTag) }
        if request.fastAppTarget != 0 { android["fast_app_target"] = .number(Double(request.fastAppTarget)) }
        var notification = request.huaweiNotification
        if notification != nil {
            if notification?["click_action"] == nil { notification?["click_action"] = Self.defaultClickAction }
            if notification?["foreground_show"] == nil { notification?["foreground_show"] = false }
        }
        func ensure() {
            if notification == nil { notification = Self.defaultNotification }
        }
        if !request.message.isEmpty {
            ensure()
            notification?["body"] = .string(request.message)
        }
        if !request.title.isEmpty {
            ensure()
            notification?["title"] = .string(request.title)
        }
        if !request.image.isEmpty {
            ensure()
            notification?["image"] = .string(request.image)
        }
        if case .string(let sound)? = request.sound, !sound.isEmpty {
            ensure()
            notification?["sound"] = .string(sound)
        } else if notification != nil {
            notification?["default_sound"] = true
        }
        if let notification { android["notification"] = .object(notification) }
        var message: [String: JSONValue] = ["android": .object(android)]
        if !request.huaweiData.isEmpty { message["data"] = .string(request.huaweiData) }
        if toTopic {
            if !request.topic.isEmpty { message["topic"] = .string(request.topic) }
            if !request.condition.isEmpty { message["condition"] = .string(request.condition) }
        }
        return PushNotification(
            kind: notification == nil ? .background : .alert, priority: request.priority == "high" ? .high : .normal, payload: .object(message),
            timeToLive: timeToLive
        )
    }

    /// Huawei's SDK default click action: type 1 (an intent or action) with the action `Action`.
    static let defaultClickAction: JSONValue = ["type": 1, "action": "Action"]

    /// Huawei's SDK default notification.
    static let defaultNotification: [String: JSONValue] = [
        "default_sound": true, "importance": "NORMAL", "click_action": Self.defaultClickAction, "use_default_vibrate": true,
        "use_default_light": true, "visibility": "PRIVATE", "foreground_show": true, "auto_cancel": true,
    ]

    /// The seconds of a `ttl` written as the HMS back end writes one (`86400s`: digits without a leading
    /// zero, then `s`), so that stating it sends the same text; nil for any other text.
    static func wholeSeconds(_ text: String) -> Int? {
        guard text.utf8.count >= 2, text.utf8.count <= 12, text.hasSuffix("s") else { return nil }
        let digits = text.dropLast()
        guard digits.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
            digits == "0" || !digits.hasPrefix("0"), let seconds = Int(digits)
        else { return nil }
        return seconds
    }
}
