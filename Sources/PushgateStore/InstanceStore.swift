public import Foundation

/// The gateway instances sharing a store, each recording a heartbeat now and then (the operator
/// console's list of instances).
public protocol InstanceStore: Sendable {
    /// Creates or replaces the record of `record.name`.
    func recordInstance(_ record: InstanceRecord) async throws
    /// The instances whose last heartbeat is at or after `since`, by name.
    func instances(seenSince since: Date) async throws -> [InstanceRecord]
    /// Deletes the records whose last heartbeat is before `cutoff`.
    /// - Returns: how many were deleted.
    func purgeInstances(seenBefore cutoff: Date) async throws -> Int
}
