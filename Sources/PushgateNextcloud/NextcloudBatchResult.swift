import Foundation
import Hummingbird
import NIOCore

/// The answer to one batch: how many entries failed and which device identifiers the server should
/// forget.
struct NextcloudBatchResult: Sendable, Equatable {
    /// Entries that were not delivered and will not be (unreadable, refused, or refused by the provider).
    var failed = 0
    /// Device identifiers that are not registered (any more); the server deletes them.
    private(set) var unknown: [String] = []
    /// Entries a provider could not take now, kept in the outbox (not reported to the server).
    var queued = 0
    private var listed: Set<String> = []

    /// Lists an identifier once.
    mutating func addUnknown(_ deviceID: String) {
        if self.listed.insert(deviceID).inserted { self.unknown.append(deviceID) }
    }

    /// `200 {"failed": N, "unknown": [...]}`, `failed` an integer, `unknown` always a list.
    var response: Response {
        let object: [String: Any] = ["failed": self.failed, "unknown": self.unknown]
        let body = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
        return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}
