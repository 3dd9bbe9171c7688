import Foundation
import PushgateStatusWire

/// A store query's answer as nwaku's REST API writes it: `{"requestId", "statusCode", "statusDesc",
/// "messages": [{"messageHash", "message", "pubsubTopic"}], "paginationCursor"?}`, each `message` in the
/// relay API's shape (``WakuMessageJSON``). A status code other than 200 in the body is the store peer's
/// refusal.
enum WakuStoreJSON {
    /// The page in an answer. Entries without a readable message are skipped (a query without
    /// `includeData` has none).
    static func page(from body: [UInt8]) throws(WakuRelayError) -> WakuStorePage {
        let root: Any
        do {
            root = try JSONSerialization.jsonObject(with: Data(body), options: [])
        } catch {
            throw .malformedAnswer("not JSON")
        }
        guard let object = root as? [String: Any] else { throw .malformedAnswer("not a JSON object") }
        if let code = (object["statusCode"] as? NSNumber)?.intValue, code != 200 {
            throw .refused(status: code, reason: String(((object["statusDesc"] as? String) ?? "").prefix(300)))
        }
        guard let items = object["messages"] as? [Any] else { throw .malformedAnswer("no messages array") }
        let messages = items.compactMap { item -> WakuMessage? in
            guard let entry = item as? [String: Any], let message = entry["message"] as? [String: Any] else { return nil }
            return WakuMessageJSON.message(message)
        }
        let cursor = (object["paginationCursor"] as? String).flatMap { $0.isEmpty ? nil : $0 }
        return WakuStorePage(messages: messages, cursor: cursor)
    }
}
