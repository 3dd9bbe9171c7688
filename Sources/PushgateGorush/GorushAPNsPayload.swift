import PushgateCore

/// The APNs notification gorush would send for a platform-1 notification: the `aps` dictionary built
/// from the fields as gorush builds it, every `data` key as a top-level payload key, and the headers
/// (`apns-topic` = `topic`, with `.voip` appended for VoIP where gorush sends it without, `apns-push-type`
/// = `push_type`, `priority` normal → 5 / high → 10 and no `apns-priority` for any other value or none,
/// `expiration`, `apns_id`, `collapse_id`).
enum GorushAPNsPayload {
    /// The `alert` members gorush's `Alert` holds as strings.
    static let alertStringKeys: [StaticString] = [
        "title", "subtitle", "body", "action", "action-loc-key", "launch-image", "loc-key", "title-loc-key", "summary-arg",
    ]

    /// Why a notification cannot be built.
    struct Refusal: Error, Equatable {
        let reason: String
    }

    /// The provider-ready notification.
    /// - Throws: ``Refusal`` when `data` carries an `aps` key beside fields that build `aps` (which
    ///   makes gorush crash).
    static func notification(for request: GorushNotification) throws(Refusal) -> PushNotification {
        let aps = Self.aps(request)
        var payload: [String: JSONValue] = [:]
        for (key, value) in request.data where key != "aps" {
            payload[key] = value
        }
        if let custom = request.data["aps"] {
            // gorush lets `data.aps` replace the dictionary when no field builds one (and crashes when one does).
            guard aps.isEmpty else {
                throw Refusal(reason: "data.aps cannot be combined with fields that build the aps dictionary (message, title, alert, badge, sound, …)")
            }
            payload["aps"] = custom
        } else {
            payload["aps"] = .object(aps)
        }
        // Without a `push_type`, apns2 sends `apns-push-type: alert` (`client.go` `setHeaders`), also for a
        // payload that only wakes the app: gorush callers who want a background push say so.
        let kind: PushKind
        switch request.pushType {
        case "background": kind = .background
        case "voip": kind = .voip
        default: kind = .alert
        }
        return PushNotification(
            kind: kind,
            priority: Self.priority(request.priority),
            payload: .object(payload),
            collapseID: request.collapseID.isEmpty ? nil : request.collapseID,
            apnsTopic: Self.topic(request),
            apnsPushType: request.pushType.isEmpty ? nil : request.pushType,
            apnsID: request.apnsID.isEmpty ? nil : request.apnsID,
            expiration: Self.expiration(request.expiration)
        )
    }

    /// The `apns-topic`: the caller's `topic`, but with `.voip` appended for a VoIP push to a bare bundle id.
    /// Here Pushgate differs from gorush on purpose: gorush sends the topic unchanged (`GetIOSNotification`),
    /// and APNs refuses a VoIP push whose topic is not the app's `.voip` topic, so the call never arrives.
    static func topic(_ request: GorushNotification) -> String? {
        guard !request.topic.isEmpty else { return nil }
        guard request.pushType == "voip", !request.topic.hasSuffix(".voip") else { return request.topic }
        return request.topic + ".voip"
    }

    /// The priority gorush states: `normal` and `high` only (`notification_apns.go` `GetIOSNotification`
    /// sets apns2's `Priority` for these two and leaves it zero, so no `apns-priority` header, otherwise).
    static func priority(_ value: String) -> PushPriority? {
        switch value {
        case "normal": .normal
        case "high": .high
        default: nil
        }
    }

    /// The `apns-expiration` gorush states: apns2 sends the header only for a time after the epoch
    /// (`client.go` `setHeaders`: `Expiration.After(time.Unix(0, 0))`), so `0` or less is no header (APNs
    /// then stores the push and tries again), not `0` (one attempt, never stored).
    static func expiration(_ value: Int64?) -> Int64? {
        guard let value, value > 0 else { return nil }
        return value
    }

    /// The `aps` dictionary, field by field as gorush sets it.
    static func aps(_ request: GorushNotification) -> [String: JSONValue] {
        var aps: [String: JSONValue] = [:]
        if !request.message.isEmpty, request.title.isEmpty {
            aps["alert"] = .string(request.message)
        }
        if let badge = request.badge, badge >= 0 {
            aps["badge"] = .number(Double(badge))
        }
        if request.mutableContent { aps["mutable-content"] = 1 }
        if let sound = Self.sound(request) { aps["sound"] = sound }
        if request.contentAvailable { aps["content-available"] = 1 }
        if !request.urlArgs.isEmpty { aps["url-args"] = .array(request.urlArgs.map(JSONValue.string)) }
        if !request.threadID.isEmpty { aps["thread-id"] = .string(request.threadID) }
        if !request.interruptionLevel.isEmpty { aps["interruption-level"] = .string(request.interruptionLevel) }
        if !request.category.isEmpty { aps["category"] = .string(request.category) }
        if let alert = Self.alertDictionary(request) { aps["alert"] = .object(alert) }
        // Live Activities.
        if !request.contentState.isEmpty { aps["content-state"] = .object(request.contentState) }
        if request.staleDate > 0 { aps["stale-date"] = .number(Double(request.staleDate)) }
        if request.dismissalDate > 0 { aps["dismissal-date"] = .number(Double(request.dismissalDate)) }
        if !request.event.isEmpty { aps["event"] = .string(request.event) }
        if request.timestamp > 0 { aps["timestamp"] = .number(Double(request.timestamp)) }
        if !request.attributesType.isEmpty { aps["attributes-type"] = .string(request.attributesType) }
        if !request.attributes.isEmpty { aps["attributes"] = .object(request.attributes) }
        if let score = request.relevanceScore { aps["relevance-score"] = .number(score) }
        return aps
    }

    /// The alert dictionary, or nil when no field makes one (then `message` alone is a plain alert string).
    private static func alertDictionary(_ request: GorushNotification) -> [String: JSONValue]? {
        var alert: [String: JSONValue] = [:]
        if !request.title.isEmpty {
            alert["title"] = .string(request.title)
            if !request.message.isEmpty { alert["body"] = .string(request.message) }
        }
        for (key, value) in request.alert { alert[key] = value }
        return alert.isEmpty ? nil : alert
    }

    /// `sound` as gorush sets it (`notify/notification_apns.go` `setPayloadSound`): a string as it is; an
    /// object decoded into gorush's `Sound` (`critical` an integer, `name`, `volume`; zero values left out,
    /// no defaults). Then a top-level `name` or `volume` goes through apns2's `SoundName`/`SoundVolume`
    /// (`payload/builder.go`), which replace whatever sound was set by apns2's own dictionary,
    /// `{"critical": 1, "name": "default", "volume": 1}`, and override the given keys.
    private static func sound(_ request: GorushNotification) -> JSONValue? {
        if !request.soundName.isEmpty || request.soundVolume > 0 {
            var sound: [String: JSONValue] = ["critical": 1, "name": "default", "volume": 1]
            if !request.soundName.isEmpty { sound["name"] = .string(request.soundName) }
            if request.soundVolume > 0 { sound["volume"] = .number(request.soundVolume) }
            return .object(sound)
        }
        switch request.sound {
        case .string(let name)?: return .string(name)
        case .object(let members)?: return .object(Self.gorushSound(members))
        default: return nil
        }
    }

    /// A `sound` object as mapstructure decodes it into gorush's `Sound`: keys matched ignoring case, a
    /// member of the wrong type skipped, `critical` truncated to an integer, and the zero values left out
    /// (its `omitempty` tags).
    private static func gorushSound(_ members: [String: JSONValue]) -> [String: JSONValue] {
        func member(_ key: String) -> JSONValue? {
            members[key] ?? members.first { $0.key.lowercased() == key }?.value
        }
        var sound: [String: JSONValue] = [:]
        if case .number(let critical)? = member("critical"), critical.magnitude < 9.2e18, critical.rounded(.towardZero) != 0 {
            sound["critical"] = .number(critical.rounded(.towardZero))
        }
        if case .string(let name)? = member("name"), !name.isEmpty { sound["name"] = .string(name) }
        if case .number(let volume)? = member("volume"), volume != 0 { sound["volume"] = .number(volume) }
        return sound
    }
}
