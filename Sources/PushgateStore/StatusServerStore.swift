public import Foundation

/// One Status registration row: keyed by the SHAKE-256 (64 bytes) of the client's compressed key and the
/// installation id; `registration` is the marshalled protobuf, nil once unregistered or dropped.
public struct StatusRegistrationRecord: Sendable, Equatable {
    /// SHAKE-256 (64 bytes) of the client's compressed public key.
    public var publicKeyHash: [UInt8]
    /// The client installation's UUID.
    public var installationID: String
    /// The registration's version; a newer registration must have a higher one. At most `Int64.max`.
    public var version: UInt64
    /// The marshalled `PushNotificationRegistration`; nil: unregistered (the version still counts).
    public var registration: [UInt8]?

    /// Creates a row.
    public init(publicKeyHash: [UInt8], installationID: String, version: UInt64, registration: [UInt8]?) {
        self.publicKeyHash = publicKeyHash
        self.installationID = installationID
        self.version = version
        self.registration = registration
    }
}

/// What a Status push notification server keeps: registrations, the ids of messages it handled, and its
/// identity. Shared by every instance on the store.
public protocol StatusServerStore: Sendable {
    /// The row for (key hash, installation id), unregistered ones included (their version still counts).
    func statusRegistration(publicKeyHash: [UInt8], installationID: String) async throws -> StatusRegistrationRecord?
    /// The rows with a registration (not unregistered) for any of these key hashes, in one query.
    func statusRegistrations(publicKeyHashes: [[UInt8]]) async throws -> [StatusRegistrationRecord]
    /// Saves the row only if none exists for its key hash and installation id or the stored version is
    /// lower (atomic: two instances racing with the same version store it once).
    /// - Returns: whether it was saved.
    /// - Throws: ``StoreError`` also when the version is above `Int64.max`.
    func saveStatusRegistration(_ record: StatusRegistrationRecord) async throws -> Bool
    /// Sets the registration of (key hash, installation id) to nil if its version is still `version` (a
    /// provider said the device token is dead; a newer registration is left alone).
    /// - Returns: whether a registration was dropped.
    func dropStatusRegistration(publicKeyHash: [UInt8], installationID: String, version: UInt64) async throws -> Bool
    /// The distinct key hashes that have at least one registration (the query topics to listen on).
    func statusRegisteredKeyHashes() async throws -> [[UInt8]]
    /// Records a message id as seen at `seenAt` by one handling attempt, named by `claim` (random bytes,
    /// new for each attempt and the same when the attempt repeats this call after an error).
    /// - Returns: `true` when the id was not seen before or was recorded with this `claim` (an earlier call
    ///   of the same attempt was written but its answer was lost): the caller handles the message. `false`
    ///   when another attempt recorded it.
    func markStatusMessageSeen(_ id: [UInt8], claim: [UInt8], seenAt: Date) async throws -> Bool
    /// Forgets ids seen before `cutoff`.
    /// - Returns: how many.
    func pruneStatusMessagesSeen(before cutoff: Date) async throws -> Int
    /// The server's identity (a 32-byte secp256k1 secret), if one was saved.
    func statusIdentity() async throws -> [UInt8]?
    /// Saves `secret` as the identity unless one exists; returns the identity stored afterwards (so two
    /// instances starting together agree on one).
    func saveStatusIdentityIfAbsent(_ secret: [UInt8]) async throws -> [UInt8]
}
