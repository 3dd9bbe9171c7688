import PushgateCore

/// Reads a `POST /api/push` body as gorush's JSON binding does: unknown keys are ignored, `null` leaves a
/// field at its zero value, keys match field names exactly or, failing that, ignoring ASCII case, and a
/// value of the wrong type fails the whole request (gorush then answers `Missing notifications field.`).
enum GorushRequestReader {
    /// Why a body cannot be read.
    struct Unreadable: Error, Equatable {
        /// What was wrong, for the debug log (never the value itself).
        let reason: String
    }

    /// The notifications of a body.
    /// - Throws: ``Unreadable`` for anything gorush's binding refuses (bad JSON, a wrong type, no
    ///   `notifications`).
    static func notifications(_ body: [UInt8]) throws(Unreadable) -> [GorushNotification] {
        let root: JSONValue
        do {
            // As Go's encoding/json reads it: a caller's text cut inside an emoji (a lone surrogate escape,
            // or a UTF-8 sequence cut short) becomes U+FFFD, not a refused request.
            root = try JSONParser.parseReplacingInvalidUnicode(body)
        } catch {
            throw Unreadable(reason: "the body is not JSON (\(error.description))")
        }
        guard case .object(let members) = root else { throw Unreadable(reason: "the body is not a JSON object") }
        let fields = Fields(members, path: "")
        guard let list = try fields.value("notifications") else { throw Unreadable(reason: "notifications is missing") }
        guard case .array(let items) = list else { throw Unreadable(reason: "notifications is not an array") }
        return try items.enumerated().map { index, item throws(Unreadable) in
            switch item {
            case .null: return GorushNotification()
            case .object(let members): return try Self.notification(Fields(members, path: "notifications[\(index)]."))
            default: throw Unreadable(reason: "notifications[\(index)] is not an object")
            }
        }
    }

    private static func notification(_ fields: Fields) throws(Unreadable) -> GorushNotification {
        var notification = GorushNotification()
        notification.notifID = try fields.string("notif_id")
        notification.to = try fields.string("to")
        notification.topic = try fields.string("topic")
        notification.tokens = try fields.strings("tokens")
        notification.platform = try fields.int("platform") ?? 0
        notification.message = try fields.string("message")
        notification.title = try fields.string("title")
        notification.image = try fields.string("image")
        notification.priority = try fields.string("priority")
        notification.contentAvailable = try fields.bool("content_available")
        notification.mutableContent = try fields.bool("mutable_content")
        notification.sound = try fields.value("sound")
        notification.data = try fields.object("data") ?? [:]
        notification.retry = try fields.int("retry") ?? 0
        notification.app = try fields.string("app")
        notification.notification = try Self.fcmNotification(fields)
        // Read into firebase-admin-go's typed structs, as gorush reads them (``GorushFCMSections``).
        if let android = try fields.object("android") {
            let read = try GorushFCMSections.android(android, path: fields.path + "android.")
            notification.android = read.section
            notification.androidTTL = read.ttl
        }
        if let webpush = try fields.object("webpush") { notification.webpush = try GorushFCMSections.webpush(webpush, path: fields.path + "webpush.") }
        if let apns = try fields.object("apns") { notification.apns = try GorushFCMSections.apns(apns, path: fields.path + "apns.") }
        if let options = try fields.object("fcm_options") {
            notification.fcmOptions = try GorushFCMSections.fcmOptions(options, path: fields.path + "fcm_options.")
        }
        notification.condition = try fields.string("condition")
        // A request's own HMS credentials (`app_id`, `app_secret`) are read for their types only: the
        // configured app always delivers.
        for key: StaticString in ["app_id", "app_secret"] { _ = try fields.string(key) }
        notification.huaweiNotification = try fields.object("huawei_notification")
        notification.huaweiData = try fields.string("huawei_data")
        notification.huaweiCollapseKey = try fields.int("huawei_collapse_key") ?? 0
        notification.huaweiTTL = try fields.string("huawei_ttl")
        notification.biTag = try fields.string("bi_tag")
        notification.fastAppTarget = try fields.int("fast_app_target") ?? 0
        notification.expiration = try fields.int64("expiration")
        notification.apnsID = try fields.string("apns_id")
        notification.collapseID = try fields.string("collapse_id")
        notification.pushType = try fields.string("push_type")
        notification.badge = try fields.int("badge")
        notification.category = try fields.string("category")
        notification.threadID = try fields.string("thread-id")
        notification.urlArgs = try fields.strings("url-args")
        notification.alert = try Self.alert(fields)
        notification.production = try fields.bool("production")
        notification.development = try fields.bool("development")
        notification.soundName = try fields.string("name")
        notification.soundVolume = try fields.number("volume") ?? 0
        notification.interruptionLevel = try fields.string("interruption_level")
        notification.contentState = try fields.object("content-state") ?? [:]
        notification.staleDate = try fields.int64("stale-date") ?? 0
        notification.dismissalDate = try fields.int64("dismissal-date") ?? 0
        notification.event = try fields.string("event")
        notification.timestamp = try fields.int64("timestamp") ?? 0
        notification.attributesType = try fields.string("attributes-type")
        notification.attributes = try fields.object("attributes") ?? [:]
        notification.relevanceScore = try fields.number("relevance-score")
        return notification
    }

    /// The `alert` object, its members type-checked as gorush's `Alert` declares them.
    private static func alert(_ fields: Fields) throws(Unreadable) -> [String: JSONValue] {
        guard let members = try fields.object("alert") else { return [:] }
        let alert = Fields(members, path: fields.path + "alert.")
        var result: [String: JSONValue] = [:]
        for key in GorushAPNsPayload.alertStringKeys {
            let value = try alert.string(key)
            if !value.isEmpty { result[key.description] = .string(value) }
        }
        for key: StaticString in ["loc-args", "title-loc-args"] {
            let value = try alert.strings(key)
            if !value.isEmpty { result[key.description] = .array(value.map(JSONValue.string)) }
        }
        if let count = try alert.int("summary-arg-count"), count > 0 { result["summary-arg-count"] = .number(Double(count)) }
        return result
    }

    /// The `notification` object as gorush reads it, into firebase-admin-go's `messaging.Notification`
    /// (`notify/notification.go` `PushNotification.Notification`): `title`, `body` and `image`, strings,
    /// the empty ones left out as its `omitempty` leaves them out; every other member (`icon`, `color`,
    /// `click_action`, `sound`, `tag`, …) is dropped, since FCM v1's `notification` has no such fields and
    /// refuses the whole message for one of them. Nil when absent; an object (maybe empty) when given.
    private static func fcmNotification(_ fields: Fields) throws(Unreadable) -> [String: JSONValue]? {
        guard let members = try fields.object("notification") else { return nil }
        let notification = Fields(members, path: fields.path + "notification.")
        var result: [String: JSONValue] = [:]
        for key: StaticString in ["title", "body", "image"] {
            let value = try notification.string(key)
            if !value.isEmpty { result[key.description] = .string(value) }
        }
        return result
    }

    /// The members of one JSON object, looked up as Go's decoder does.
    private struct Fields {
        let members: [String: JSONValue]
        let path: String
        /// Whether some key is not lower-case ASCII, so a key missing exactly may still match in another
        /// case (most requests have none, and then an absent field costs one lookup).
        private let foldingMayMatch: Bool
        /// One bit for each key present, chosen by its UTF-8 length, first and last byte: a notification
        /// names a few of the fifty-odd fields read, and a field whose bit no key sets is absent without
        /// hashing its name. (A bit by length alone still let about 25 look-ups a one-token request through,
        /// some 10,000 instructions, 20 of them for absent fields.)
        private let keySignatures: UInt64

        init(_ members: [String: JSONValue], path: String) {
            self.members = members
            self.path = path
            // One pass over each key's contiguous UTF-8 for both (the `UTF8View`'s `first` and `last` cost
            // more than the look-ups the bits save).
            var foldingMayMatch = false
            var keySignatures: UInt64 = 0
            for key in members.keys {
                var key = key
                key.withUTF8 { bytes in
                    keySignatures |= bytes.isEmpty ? 1 : Self.signatureBit(count: bytes.count, first: bytes[0], last: bytes[bytes.count - 1])
                    if !foldingMayMatch { foldingMayMatch = bytes.contains { $0 >= 0x80 || (0x41...0x5A).contains($0) } }
                }
            }
            self.foldingMayMatch = foldingMayMatch
            self.keySignatures = keySignatures
        }

        /// The key's bit: equal keys have equal bits, so a key present exactly always has its bit set.
        private static func signatureBit(count: Int, first: UInt8, last: UInt8) -> UInt64 {
            let mixed = (UInt64(count) &* 0x9E37_79B9_7F4A_7C15) ^ (UInt64(first) &* 0xBF58_476D_1CE4_E5B9) ^ (UInt64(last) &* 0x94D0_49BB_1331_11EB)
            return 1 << (mixed >> 58)
        }

        /// A field name's bit, from the literal's bytes.
        private static func signatureBit(_ key: StaticString) -> UInt64 {
            key.withUTF8Buffer { bytes in bytes.isEmpty ? 1 : Self.signatureBit(count: bytes.count, first: bytes[0], last: bytes[bytes.count - 1]) }
        }

        /// The member for `key` (lower-case ASCII, as every key gorush reads is): an exact match, else one
        /// that differs only in case; nil when absent or null.
        func value(_ key: StaticString) throws(Unreadable) -> JSONValue? {
            var found = self.keySignatures & Self.signatureBit(key) == 0 ? nil : self.members[key.description]
            if found == nil, self.foldingMayMatch {
                let lowered = key.description.lowercased()
                found = self.members.first { $0.key.lowercased() == lowered }?.value
            }
            if case .null? = found { return nil }
            return found
        }

        private func mismatch(_ key: StaticString, _ expected: String) -> Unreadable {
            Unreadable(reason: "\(self.path)\(key) is not \(expected)")
        }

        func string(_ key: StaticString) throws(Unreadable) -> String {
            switch try self.value(key) {
            case nil: return ""
            case .string(let text)?: return text
            default: throw self.mismatch(key, "a string")
            }
        }

        func strings(_ key: StaticString) throws(Unreadable) -> [String] {
            switch try self.value(key) {
            case nil: return []
            case .array(let items)?:
                var result: [String] = []
                result.reserveCapacity(items.count)
                for item in items {
                    switch item {
                    case .string(let text): result.append(text)
                    case .null: result.append("")
                    default: throw self.mismatch(key, "a list of strings")
                    }
                }
                return result
            default: throw self.mismatch(key, "a list of strings")
            }
        }

        func bool(_ key: StaticString) throws(Unreadable) -> Bool {
            switch try self.value(key) {
            case nil: return false
            case .bool(let flag)?: return flag
            default: throw self.mismatch(key, "true or false")
            }
        }

        func number(_ key: StaticString) throws(Unreadable) -> Double? {
            switch try self.value(key) {
            case nil: return nil
            case .number(let number)?: return number
            default: throw self.mismatch(key, "a number")
            }
        }

        func int64(_ key: StaticString) throws(Unreadable) -> Int64? {
            guard let number = try self.number(key) else { return nil }
            guard number.rounded() == number, abs(number) < 9.2e18 else { throw self.mismatch(key, "an integer") }
            return Int64(number)
        }

        func int(_ key: StaticString) throws(Unreadable) -> Int? {
            try self.int64(key).map { Int($0) }
        }

        func object(_ key: StaticString) throws(Unreadable) -> [String: JSONValue]? {
            switch try self.value(key) {
            case nil: return nil
            case .object(let members)?: return members
            default: throw self.mismatch(key, "an object")
            }
        }
    }
}
