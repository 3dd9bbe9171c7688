import Foundation
import Hummingbird
import PushgateCore

extension WakuRESTNode {
    /// nwaku's answer when it has no store peer and no way to discover one.
    static let noStorePeer = "No suitable service peer & no discovery method"

    /// `GET /store/v3/messages` as nwaku serves it (status-wire.md §4.1, §4.6): the query's parameters
    /// percent-encoded, `contentTopics` a comma list of at most ten, times in nanoseconds, `pageSize`
    /// 20 by default and 100 at most, `ascending` (default true); the answer `{"requestId", "statusCode",
    /// "statusDesc", "messages": [{"messageHash", "message", "pubsubTopic"}], "paginationCursor"?}`, hashes
    /// as `0x` hex; 412 when the node has no store peer.
    func storeQuery(_ query: String?) -> Reply {
        guard self.hasStorePeer else { return .text(.preconditionFailed, Self.noStorePeer) }
        var parameters: [String: String] = [:]
        for item in (query ?? "").split(separator: "&") {
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = parts.first.map(String.init), let value = Self.decodeSegment(parts.count > 1 ? String(parts[1]) : "") else {
                return .text(.badRequest, "Bad request initiated. Invalid query parameter.")
            }
            parameters[name] = value
        }
        let contentTopics = (parameters["contentTopics"] ?? "").split(separator: ",").map(String.init)
        guard contentTopics.count <= 10 else { return .text(.internalServerError, "Error occurred in queryFut.read() [too many content topics]") }
        var cursor: [UInt8]?
        if let text = parameters["cursor"], !text.isEmpty {
            guard let bytes = Hex.decode(text.hasPrefix("0x") ? String(text.dropFirst(2)) : text), bytes.count == 32 else {
                return .text(.badRequest, "invalid cursor hash length")
            }
            cursor = bytes
        }
        func time(_ name: String) -> Int64? { parameters[name].flatMap { Int64($0) }.flatMap { $0 > 0 ? $0 : nil } }
        let pageSize = min(100, parameters["pageSize"].flatMap { Int($0) }.flatMap { $0 > 0 ? $0 : nil } ?? 20)
        let includeData = parameters["includeData"] == "true"
        let page = self.network.archive.query(
            pubsubTopic: parameters["pubsubTopic"].flatMap { $0.isEmpty ? nil : $0 }, contentTopics: Set(contentTopics), startTime: time("startTime"),
            endTime: time("endTime"), cursor: cursor, ascending: parameters["ascending"] != "false", pageSize: pageSize
        )
        self.countStoreQuery()
        let entries = page.messages.map { entry in
            "{\"messageHash\":\"0x\(Hex.lowercase(entry.hash))\"" + (includeData ? ",\"message\":" + entry.message.restJSON : "")
                + ",\"pubsubTopic\":" + WakuEmulatedMessage.quoted(entry.message.pubsubTopic) + "}"
        }
        var body = "{\"requestId\":\"\(UUID().uuidString.lowercased())\",\"statusCode\":200,\"statusDesc\":\"OK\",\"messages\":[" + entries.joined(separator: ",") + "]"
        if let next = page.cursor { body += ",\"paginationCursor\":\"0x\(Hex.lowercase(next))\"" }
        return Reply(status: .ok, body: body + "}", json: true)
    }
}
