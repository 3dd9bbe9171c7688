import Foundation
import PushgateCore
import PushgateStore

/// Records message ids as seen, one handling attempt at a time, so that a message is handled once across
/// every instance on the store. A failed write is repeated with the attempt's same claim: when the first
/// write reached the store but its answer was lost (the store's deadline passed), the repeat finds the id
/// recorded with this attempt's claim and takes it, instead of reading it as another instance's and
/// dropping a message nobody handled.
struct StatusSeenMarker: Sendable {
    /// The pauses before the second and later writes after a failed one: 0.2 s, then 1 s.
    static let defaultPauses: [Duration] = [.milliseconds(200), .seconds(1)]

    let store: any StatusServerStore
    /// The pauses before each repeated write; one write more than there are pauses.
    var pauses: [Duration] = Self.defaultPauses

    /// Records `id` for a new attempt.
    /// - Returns: `true` when this attempt takes the message (handle it), `false` when another did.
    /// - Throws: the last write's error when every write failed, or `CancellationError`.
    func mark(_ id: [UInt8]) async throws -> Bool {
        let claim = SecureRandomPool.shared.bytes(16)
        let seenAt = Date()
        var pauses = self.pauses[...]
        while true {
            do {
                return try await self.store.markStatusMessageSeen(id, claim: claim, seenAt: seenAt)
            } catch {
                guard let pause = pauses.popFirst(), !(error is CancellationError) else { throw error }
                try await Task.sleep(for: pause)
            }
        }
    }
}

/// The seen-id spaces of the Status server's store.
enum StatusSeenID {
    /// A Waku message's 14/WAKU2 hash (a message several instances or polls see).
    static func wakuHash(_ hash: [UInt8]) -> [UInt8] { [1] + hash }
    /// A push request's Status message id (status-go's at-most-once key).
    static func messageID(_ id: [UInt8]) -> [UInt8] { [2] + id }
}
