public import Foundation
import ServiceLifecycle

/// A store whose every call ends by a deadline (``StoreCallGuard``) and whose ability to write is watched
/// (``StoreWriteHealth``), around the SQLite or PostgreSQL store that does the work.
///
/// The composition root hands this to every front end, the outbox worker and the health check, so no
/// caller waits on a database longer than ``StoreCallGuard/timeout``.
public final class BoundedStore: PushStore {
    /// The store that does the work.
    public let base: any PushStore
    /// The deadline and circuit every call goes through.
    public let calls: StoreCallGuard
    /// What the last writes said about the database.
    public let writes: StoreWriteHealth

    public var kind: String { self.base.kind }

    /// Wraps `base`.
    /// - Parameters:
    ///   - timeout: the deadline of one call.
    ///   - probeInterval: how long a write outcome is trusted before the health check writes once itself.
    public init(_ base: any PushStore, timeout: Duration, probeInterval: Duration = .seconds(30)) {
        self.base = base
        self.calls = StoreCallGuard(timeout: timeout)
        self.writes = StoreWriteHealth(probeInterval: probeInterval)
    }

    public func run() async throws {
        try await self.base.run()
    }

    public func ping() async throws {
        try await self.guarded { try await $0.ping() }
    }

    public func storeError(for error: any Error) -> StoreError {
        self.base.storeError(for: error)
    }

    /// Runs a call under the deadline and the circuit; what the base store's database library threw
    /// becomes the base store's ``StoreError`` for it (a cancellation stays one).
    private func guarded<T: Sendable>(_ call: @escaping @Sendable (any PushStore) async throws -> T) async throws -> T {
        let base = self.base
        do {
            return try await self.calls.run { try await call(base) }
        } catch let error as StoreError {
            throw error
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw base.storeError(for: error)
        }
    }

    /// Whether the store answers and can write, for `/health`: a read every time; whether it can write
    /// comes from the last writes. When no write outcome is recent (none within the probe interval, or
    /// writes failing and no probe within the last second) a small write is started in the background,
    /// whose outcome the next check reports; so a check never waits on a write, and probes do not write
    /// each time.
    public func health() async -> StoreHealth {
        do {
            try await self.ping()
        } catch {
            return .unreachable(reason: "\(error)")
        }
        // What the writes said so far, read before a probe may change it.
        let failure = self.writes.failure
        if self.writes.needsProbe() {
            Task { await self.probeWrite() }
        }
        if let failure { return .notWritable(reason: failure) }
        return .healthy
    }

    /// Writes one small counter to learn whether writes succeed (the outcome is recorded by `write`).
    private func probeWrite() async {
        let now = Date()
        _ = try? await self.write { base in
            try await base.incrementCounter(StoreWriteHealth.probeCounter, by: 1, expiresAt: now.addingTimeInterval(3600), now: now)
        }
        self.writes.probeEnded()
    }

    private func read<T: Sendable>(_ call: @escaping @Sendable (any PushStore) async throws -> T) async throws -> T {
        try await self.guarded(call)
    }

    /// Runs a write and records its outcome. A write that changed nothing (an empty claim, a delete of
    /// nothing: `changed` says) is not counted as a success: it may not have needed the disk at all.
    private func write<T: Sendable>(
        _ call: @escaping @Sendable (any PushStore) async throws -> T, changed: (T) -> Bool = { _ in true }
    ) async throws -> T {
        let started = ContinuousClock.now
        do {
            let value = try await self.guarded(call)
            if changed(value) { self.writes.succeeded(started: started) }
            return value
        } catch let error as StoreError where error.isSameKind(as: .corruptRow("")) {
            throw error
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            self.writes.failed("\(error)", started: started)
            throw error
        }
    }

    // MARK: Devices

    public func saveDevice(_ device: DeviceRegistration) async throws {
        try await self.write { try await $0.saveDevice(device) }
    }

    public func saveDevices(_ devices: [DeviceRegistration]) async throws {
        try await self.write { try await $0.saveDevices(devices) }
    }

    public func insertDeviceIfAbsent(_ device: DeviceRegistration) async throws -> Bool {
        try await self.write({ try await $0.insertDeviceIfAbsent(device) }, changed: { $0 })
    }

    public func device(namespace: String, deviceID: String) async throws -> DeviceRegistration? {
        try await self.read { try await $0.device(namespace: namespace, deviceID: deviceID) }
    }

    public func devices(namespace: String, deviceIDs: [String]) async throws -> [DeviceRegistration] {
        try await self.read { try await $0.devices(namespace: namespace, deviceIDs: deviceIDs) }
    }

    public func deleteDevice(namespace: String, deviceID: String) async throws -> Bool {
        try await self.write({ try await $0.deleteDevice(namespace: namespace, deviceID: deviceID) }, changed: { $0 })
    }

    public func deleteDevices(appID: String, pushToken: String) async throws -> Int {
        try await self.write({ try await $0.deleteDevices(appID: appID, pushToken: pushToken) }, changed: { $0 > 0 })
    }

    public func deviceCount(namespace: String) async throws -> Int {
        try await self.read { try await $0.deviceCount(namespace: namespace) }
    }

    // MARK: Outbox

    public func enqueue(_ messages: [OutboxMessage], leasedTo lease: OutboxLease?) async throws -> [Int64] {
        try await self.write { try await $0.enqueue(messages, leasedTo: lease) }
    }

    public func claimDue(now: Date, limit: Int, leaseFor lease: Duration, owner: String) async throws -> [OutboxEntry] {
        try await self.write({ try await $0.claimDue(now: now, limit: limit, leaseFor: lease, owner: owner) }, changed: { !$0.isEmpty })
    }

    public func complete(id: Int64, owner: String) async throws -> Bool {
        try await self.write({ try await $0.complete(id: id, owner: owner) }, changed: { $0 })
    }

    public func complete(ids: [Int64], owner: String) async throws -> Int {
        try await self.write({ try await $0.complete(ids: ids, owner: owner) }, changed: { $0 > 0 })
    }

    public func reschedule(_ retries: [OutboxRetry], owner: String) async throws -> Int {
        try await self.write({ try await $0.reschedule(retries, owner: owner) }, changed: { $0 > 0 })
    }

    public func pendingCount() async throws -> Int {
        try await self.read { try await $0.pendingCount() }
    }

    public func backlogByApp() async throws -> [OutboxAppBacklog] {
        try await self.read { try await $0.backlogByApp() }
    }

    // MARK: Counters

    public func incrementCounter(_ name: String, by amount: Int64, expiresAt: Date?, now: Date) async throws -> Int64 {
        try await self.write { try await $0.incrementCounter(name, by: amount, expiresAt: expiresAt, now: now) }
    }

    public func incrementCounters(_ amounts: [String: Int64], expiresAt: Date?, now: Date) async throws {
        try await self.write { try await $0.incrementCounters(amounts, expiresAt: expiresAt, now: now) }
    }

    public func counterValue(_ name: String, now: Date) async throws -> Int64 {
        try await self.read { try await $0.counterValue(name, now: now) }
    }

    public func counterValues(_ names: [String], now: Date) async throws -> [String: Int64] {
        try await self.read { try await $0.counterValues(names, now: now) }
    }

    public func purgeExpiredCounters(now: Date) async throws -> Int {
        try await self.write({ try await $0.purgeExpiredCounters(now: now) }, changed: { $0 > 0 })
    }

    // MARK: Invalid tokens

    public func recordInvalidToken(_ record: InvalidTokenRecord) async throws {
        try await self.write { try await $0.recordInvalidToken(record) }
    }

    public func invalidToken(appID: String, pushToken: String) async throws -> InvalidTokenRecord? {
        try await self.read { try await $0.invalidToken(appID: appID, pushToken: pushToken) }
    }

    public func clearInvalidToken(appID: String, pushToken: String) async throws -> Bool {
        try await self.write({ try await $0.clearInvalidToken(appID: appID, pushToken: pushToken) }, changed: { $0 })
    }

    public func purgeInvalidTokens(recordedBefore cutoff: Date) async throws -> Int {
        try await self.write({ try await $0.purgeInvalidTokens(recordedBefore: cutoff) }, changed: { $0 > 0 })
    }

    public func invalidTokens(since: Date, limit: Int) async throws -> [InvalidTokenRecord] {
        try await self.read { try await $0.invalidTokens(since: since, limit: limit) }
    }

    // MARK: Delivery counts

    public func addDeliveryCounts(_ counts: [DeliveryCount]) async throws {
        try await self.write { try await $0.addDeliveryCounts(counts) }
    }

    public func deliveryCounts(minutes: Range<Int64>) async throws -> [DeliveryCount] {
        try await self.read { try await $0.deliveryCounts(minutes: minutes) }
    }

    public func deliveryTotals(minutes: Range<Int64>) async throws -> [DeliveryCount] {
        try await self.read { try await $0.deliveryTotals(minutes: minutes) }
    }

    public func deliverySumsByApp(minutes: Range<Int64>, currentMinute: Int64) async throws -> [DeliveryAppSum] {
        try await self.read { try await $0.deliverySumsByApp(minutes: minutes, currentMinute: currentMinute) }
    }

    public func deliverySumsByMinute(minutes: Range<Int64>) async throws -> [DeliveryMinuteSum] {
        try await self.read { try await $0.deliverySumsByMinute(minutes: minutes) }
    }

    public func purgeDeliveryCounts(before minute: Int64) async throws -> Int {
        try await self.write({ try await $0.purgeDeliveryCounts(before: minute) }, changed: { $0 > 0 })
    }

    // MARK: Instances

    public func recordInstance(_ record: InstanceRecord) async throws {
        try await self.write { try await $0.recordInstance(record) }
    }

    public func instances(seenSince since: Date) async throws -> [InstanceRecord] {
        try await self.read { try await $0.instances(seenSince: since) }
    }

    public func purgeInstances(seenBefore cutoff: Date) async throws -> Int {
        try await self.write({ try await $0.purgeInstances(seenBefore: cutoff) }, changed: { $0 > 0 })
    }

    // MARK: Status server

    public func statusRegistration(publicKeyHash: [UInt8], installationID: String) async throws -> StatusRegistrationRecord? {
        try await self.read { try await $0.statusRegistration(publicKeyHash: publicKeyHash, installationID: installationID) }
    }

    public func statusRegistrations(publicKeyHashes: [[UInt8]]) async throws -> [StatusRegistrationRecord] {
        try await self.read { try await $0.statusRegistrations(publicKeyHashes: publicKeyHashes) }
    }

    public func saveStatusRegistration(_ record: StatusRegistrationRecord) async throws -> Bool {
        try await self.write({ try await $0.saveStatusRegistration(record) }, changed: { $0 })
    }

    public func dropStatusRegistration(publicKeyHash: [UInt8], installationID: String, version: UInt64) async throws -> Bool {
        try await self.write({ try await $0.dropStatusRegistration(publicKeyHash: publicKeyHash, installationID: installationID, version: version) }, changed: { $0 })
    }

    public func statusRegisteredKeyHashes() async throws -> [[UInt8]] {
        try await self.read { try await $0.statusRegisteredKeyHashes() }
    }

    public func markStatusMessageSeen(_ id: [UInt8], claim: [UInt8], seenAt: Date) async throws -> Bool {
        try await self.write({ try await $0.markStatusMessageSeen(id, claim: claim, seenAt: seenAt) }, changed: { $0 })
    }

    public func pruneStatusMessagesSeen(before cutoff: Date) async throws -> Int {
        try await self.write({ try await $0.pruneStatusMessagesSeen(before: cutoff) }, changed: { $0 > 0 })
    }

    public func statusIdentity() async throws -> [UInt8]? {
        try await self.read { try await $0.statusIdentity() }
    }

    public func saveStatusIdentityIfAbsent(_ secret: [UInt8]) async throws -> [UInt8] {
        try await self.write({ try await $0.saveStatusIdentityIfAbsent(secret) }, changed: { _ in true })
    }
}

extension BoundedStore: CustomStringConvertible {
    public var description: String { "\(self.base)" }
}
