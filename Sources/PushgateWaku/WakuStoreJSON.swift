import PushgateCore
import PushgateStatusWire

/// A store query's answer as nwaku's REST API writes it: `{"requestId", "statusCode", "statusDesc",
/// "messages": [{"messageHash", "message", "pubsubTopic"}], "paginationCursor"?}`, each `message` in the
/// relay API's shape (``WakuMessageJSON``). A status code other than 200 in the body is the store peer's
/// refusal. go-waku writes the same answer with its protobuf's snake-case names (`status_code`,
/// `pagination_cursor`, …) and leaves an empty `messages` out; both are read.
enum WakuStoreJSON {
    /// The page in an answer. Entries without a readable message are skipped (a query without
    /// `includeData` has none).
    static func page(from body: [UInt8]) throws(WakuRelayError) -> WakuStorePage {
        let isObject: Bool
        var statusCode: Int64?
        var statusDescription = ""
        var messages: [WakuMessage]?
        var cursor: String?
        do {
            isObject = try JSONParser.walk(body) { parser throws(JSONParser.Failure) -> Bool in
                guard parser.nextKind == .object else {
                    try parser.skipValue()
                    return false
                }
                try parser.readMembers { parser, key throws(JSONParser.Failure) in
                    switch key {
                    case "statusCode", "status_code": statusCode = try parser.readExactInteger()
                    case "statusDesc", "status_desc": statusDescription = try parser.readValue().stringValue ?? ""
                    case "paginationCursor", "pagination_cursor": cursor = try parser.readValue().stringValue
                    case "messages":
                        guard parser.nextKind == .array else {
                            messages = nil
                            return try parser.skipValue()
                        }
                        var read: [WakuMessage] = []
                        try parser.readElements { parser throws(JSONParser.Failure) in
                            if let message = try Self.entryMessage(&parser) { read.append(message) }
                        }
                        messages = read
                    default: try parser.skipValue()
                    }
                }
                return true
            }
        } catch {
            throw .malformedAnswer("not JSON")
        }
        guard isObject else { throw .malformedAnswer("not a JSON object") }
        if let statusCode, statusCode != 200 {
            throw .refused(status: Int(truncatingIfNeeded: statusCode), reason: String(statusDescription.prefix(300)))
        }
        // An answer that says 200 and holds no messages is an empty page (go-waku omits the empty array).
        guard let messages = messages ?? (statusCode == 200 ? [] : nil) else { throw .malformedAnswer("no messages array") }
        return WakuStorePage(messages: messages, cursor: cursor.flatMap { $0.isEmpty ? nil : $0 })
    }

    /// Reads the next value, one entry of `messages`: its `message`, when it has one that can be read.
    private static func entryMessage(_ parser: inout JSONParser) throws(JSONParser.Failure) -> WakuMessage? {
        guard parser.nextKind == .object else {
            try parser.skipValue()
            return nil
        }
        var message: WakuMessage?
        try parser.readMembers { parser, key throws(JSONParser.Failure) in
            if key == "message" {
                message = try WakuMessageJSON.message(&parser)
            } else {
                try parser.skipValue()
            }
        }
        return message
    }
}
