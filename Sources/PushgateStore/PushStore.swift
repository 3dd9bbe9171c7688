public import Foundation
public import ServiceLifecycle

/// Storage of device registrations.
public protocol DeviceStore: Sendable {
    /// Inserts or replaces the registration with the same namespace and device id.
    func saveDevice(_ device: DeviceRegistration) async throws
    /// Inserts or replaces many registrations at once, atomically (an import, or a benchmark's fixture).
    /// When two share a namespace and device id, the later one wins.
    func saveDevices(_ devices: [DeviceRegistration]) async throws
    /// Inserts the registration only if none exists with its namespace and device id.
    /// - Returns: `true` when it was inserted, `false` when one already existed (and was left unchanged).
    func insertDeviceIfAbsent(_ device: DeviceRegistration) async throws -> Bool
    /// The registration with this namespace and device id, if any.
    func device(namespace: String, deviceID: String) async throws -> DeviceRegistration?
    /// The registrations among `deviceIDs` that exist in a namespace, in no particular order (one query
    /// for a whole batch, however long).
    func devices(namespace: String, deviceIDs: [String]) async throws -> [DeviceRegistration]
    /// Removes one registration.
    /// - Returns: whether a registration was removed.
    func deleteDevice(namespace: String, deviceID: String) async throws -> Bool
    /// Removes every registration of an app that uses this token (a provider said it is invalid).
    /// - Returns: how many registrations were removed.
    func deleteDevices(appID: String, pushToken: String) async throws -> Int
    /// How many registrations a namespace holds.
    func deviceCount(namespace: String) async throws -> Int
}

/// The durable queue of notifications accepted for later delivery.
///
/// Several Pushgate instances may share one outbox: a claim leases entries to one owner until the lease
/// ends, and no entry is leased to two owners at once.
public protocol OutboxStore: Sendable {
    /// Stores messages for later delivery, atomically; with a lease, already leased to its owner (their
    /// first attempt counted), so no other worker claims them before the lease ends.
    /// - Returns: their ids, in the order given.
    func enqueue(_ messages: [OutboxMessage], leasedTo lease: OutboxLease?) async throws -> [Int64]
    /// Leases entries that are due at `now` and not leased, shared between lanes (an app and the front
    /// end that queued its entries): each lane with due entries gets a share of the claim (about `limit` ÷
    /// the lanes in the outbox, its oldest due entries, taken round-robin across lanes), so a backlog of
    /// one app, or of one front end of an app, never holds back another's; room the shares leave goes to
    /// the oldest due entries. Counts the attempt; takes as many as hold at most
    /// `limit` tokens together, and always one (whatever its tokens). Returns them oldest due first.
    func claimDue(now: Date, limit: Int, leaseFor lease: Duration, owner: String) async throws -> [OutboxEntry]
    /// Removes an entry its owner finished with (delivered or given up).
    /// - Returns: whether the entry was still leased to `owner` and was removed.
    func complete(id: Int64, owner: String) async throws -> Bool
    /// Removes several entries their owner finished with, in one write.
    /// - Returns: how many were still leased to `owner` and were removed.
    func complete(ids: [Int64], owner: String) async throws -> Int
    /// Releases entries for other attempts, each no earlier than its own `notBefore` and recording why its
    /// attempt failed, in one write; an entry whose retry names its remaining tokens keeps only those.
    /// - Returns: how many were still leased to `owner` (the others are left alone).
    func reschedule(_ retries: [OutboxRetry], owner: String) async throws -> Int
    /// How many tokens wait in the outbox (all entries' tokens), leased or not.
    func pendingCount() async throws -> Int
    /// Each app's backlog: its tokens in the outbox (leased or not) and its oldest entry's age, one row for
    /// each app with entries, in no particular order. One pass over the outbox: for metrics sampled now and
    /// then, not for every claim.
    func backlogByApp() async throws -> [OutboxAppBacklog]
}

extension OutboxStore {
    /// Stores messages for any worker to claim, atomically.
    /// - Returns: their ids, in the order given.
    public func enqueue(_ messages: [OutboxMessage]) async throws -> [Int64] {
        try await self.enqueue(messages, leasedTo: nil)
    }

    /// Releases one entry for another attempt no earlier than `notBefore`, recording why this one failed.
    /// - Returns: whether the entry was still leased to `owner`.
    public func reschedule(id: Int64, owner: String, notBefore: Date, error: String) async throws -> Bool {
        try await self.reschedule([OutboxRetry(id: id, notBefore: notBefore, error: error)], owner: owner) == 1
    }
}

/// Named counters with an optional expiry, shared by every instance on the store (rate limits, de-duplication).
public protocol CounterStore: Sendable {
    /// Adds `amount` to a counter and returns the new value. A counter past its expiry starts again from
    /// zero, with `expiresAt` as its new expiry.
    func incrementCounter(_ name: String, by amount: Int64, expiresAt: Date?, now: Date) async throws -> Int64
    /// Adds each amount to its counter, in one transaction (a group commit of many increments, or several
    /// counters that must change together). A counter past its expiry starts again from zero, with
    /// `expiresAt` as its new expiry; a live one keeps its own.
    func incrementCounters(_ amounts: [String: Int64], expiresAt: Date?, now: Date) async throws
    /// The counter's value, 0 when it does not exist or has expired.
    func counterValue(_ name: String, now: Date) async throws -> Int64
    /// The live counters among `names` and their values (one query for many; absent or expired ones are
    /// left out).
    func counterValues(_ names: [String], now: Date) async throws -> [String: Int64]
    /// Deletes expired counters.
    /// - Returns: how many were deleted.
    func purgeExpiredCounters(now: Date) async throws -> Int
}

extension CounterStore {
    /// Adds `amount` to each named counter, in one transaction; a name given twice adds twice.
    public func incrementCounters(_ names: [String], by amount: Int64, expiresAt: Date?, now: Date) async throws {
        var amounts: [String: Int64] = [:]
        for name in names { amounts[name, default: 0] += amount }
        try await self.incrementCounters(amounts, expiresAt: expiresAt, now: now)
    }
}

/// Provider tokens a provider reported invalid, kept so each front end can report them its own way
/// (Matrix `rejected`, Nextcloud `unknown`, gorush feedback).
public protocol InvalidTokenStore: Sendable {
    /// Records (or refreshes) that a provider refused `pushToken` for `appID`.
    func recordInvalidToken(_ record: InvalidTokenRecord) async throws
    /// The record for a token, if a provider refused it.
    func invalidToken(appID: String, pushToken: String) async throws -> InvalidTokenRecord?
    /// Forgets a token's record (the device registered again).
    /// - Returns: whether there was one.
    func clearInvalidToken(appID: String, pushToken: String) async throws -> Bool
    /// Records made at or after `since`, oldest first, at most `limit`.
    func invalidTokens(since: Date, limit: Int) async throws -> [InvalidTokenRecord]
    /// Forgets records made before `cutoff` (a provider's word on a token is not kept for ever: each
    /// distinct token refused would stay a row).
    /// - Returns: how many were removed.
    func purgeInvalidTokens(recordedBefore cutoff: Date) async throws -> Int
}

/// Everything Pushgate stores, behind one protocol with an SQLite and a PostgreSQL implementation.
///
/// A store is a `Service`: run it in the application's service group for as long as it is used; it releases
/// its connections on graceful shutdown.
public protocol PushStore: DeviceStore, OutboxStore, CounterStore, InvalidTokenStore, StatusServerStore, DeliveryCountStore, InstanceStore, Service {
    /// A short name for the kind of store, such as `sqlite` or `postgres`.
    var kind: String { get }
    /// Checks that the database answers.
    func ping() async throws
    /// The ``StoreError`` for an error a call of this store threw that is not one already (its database
    /// library's own), in words that name what went wrong without the values involved: such messages
    /// reach logs and `/health`. ``BoundedStore`` throws it in place of the error.
    func storeError(for error: any Error) -> StoreError
}

extension PushStore {
    /// Names only the error's type: a store whose database library's errors say more, safely, says so
    /// itself.
    public func storeError(for error: any Error) -> StoreError {
        if let error = error as? StoreError { return error }
        return .unavailable("\(self.kind): \(type(of: error))")
    }
}
