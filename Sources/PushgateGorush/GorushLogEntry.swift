import PushgateCore

/// One entry of gorush's `logs` (and one feedback webhook body):
/// `{"notif_id","type","platform","token","message","error"}`, `notif_id` left out when empty, in
/// gorush's key order.
struct GorushLogEntry: Sendable, Equatable, Codable {
    var notifID: String
    /// `failed-push` or `succeeded-push`.
    var type: String
    /// `ios`, `android` or `huawei`.
    var platform: String
    var token: String
    var message: String
    var error: String

    /// A failure, with the token and message shown as the settings say.
    init(failureOf notification: GorushNotification, platform: GorushNotification.Platform, token: String, error: String, hideToken: Bool, hideMessages: Bool) {
        self.notifID = notification.notifID
        self.type = "failed-push"
        self.platform = platform.name
        self.token = hideToken ? Self.masked(token) : token
        self.message = hideMessages ? "(message redacted)" : notification.message
        self.error = error
    }

    /// gorush's mask: every occurrence of the token's last ten characters, then of its first ten, replaced
    /// by ten `*`; a token shorter than twenty characters is all `*`.
    static func masked(_ token: String) -> String {
        let markLength = 10
        guard !token.isEmpty else { return "" }
        let bytes = Array(token.utf8)
        guard bytes.count >= markLength * 2 else { return String(repeating: "*", count: bytes.count) }
        let stars = Array(repeating: UInt8(ascii: "*"), count: markLength)
        let suffix = Array(bytes[(bytes.count - markLength)...])
        let prefix = Array(bytes[..<markLength])
        let once = Self.replacingAll(suffix, with: stars, in: bytes)
        return String(decoding: Self.replacingAll(prefix, with: stars, in: once), as: UTF8.self)
    }

    /// Go's `strings.ReplaceAll` on bytes: non-overlapping occurrences, left to right.
    private static func replacingAll(_ pattern: [UInt8], with replacement: [UInt8], in bytes: [UInt8]) -> [UInt8] {
        guard !pattern.isEmpty, bytes.count >= pattern.count else { return bytes }
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if index + pattern.count <= bytes.count, bytes[index..<(index + pattern.count)].elementsEqual(pattern) {
                result += replacement
                index += pattern.count
            } else {
                result.append(bytes[index])
                index += 1
            }
        }
        return result
    }

    /// The entry's JSON text, as gorush writes it.
    var json: String {
        var text = "{"
        if !self.notifID.isEmpty { text += "\"notif_id\":" + GoJSON.string(self.notifID) + "," }
        text += "\"type\":" + GoJSON.string(self.type)
        text += ",\"platform\":" + GoJSON.string(self.platform)
        text += ",\"token\":" + GoJSON.string(self.token)
        text += ",\"message\":" + GoJSON.string(self.message)
        text += ",\"error\":" + GoJSON.string(self.error)
        return text + "}"
    }
}
