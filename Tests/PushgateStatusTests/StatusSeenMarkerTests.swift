import Foundation
import Logging
@testable import PushgateStatus
import PushgateStatusWire
import PushgateStore
import SwiftProtobuf
import Synchronization
import Testing

/// Seen marks whose writes fail or whose answers are lost: a message is neither dropped nor handled twice.
@Suite("Status seen marks")
struct StatusSeenMarkerTests {
    let store = MemoryStatusStore()

    @Test func aWriteWhoseAnswerWasLostIsRepeatedAndTakesTheID() async throws {
        let losing = LostAnswerStore(inner: self.store, answersToLose: 1)
        let marker = StatusSeenMarker(store: losing, pauses: [.milliseconds(1)])
        #expect(try await marker.mark([1, 1]))
        #expect(losing.marks.load(ordering: .relaxed) == 2, "written, answer lost, written again")
        #expect(try await !marker.mark([1, 1]), "a later attempt for the same id does not take it")
        #expect(try await !StatusSeenMarker(store: self.store).mark([1, 1]))
    }

    @Test func writesStopAfterTheLastPauseAndTheErrorReachesTheCaller() async throws {
        let losing = LostAnswerStore(inner: self.store, answersToLose: 3)
        let marker = StatusSeenMarker(store: losing, pauses: [.milliseconds(1), .milliseconds(1)])
        await #expect(throws: LostAnswerStore.LostAnswer.self) { try await marker.mark([2, 2]) }
        #expect(losing.marks.load(ordering: .relaxed) == 3)
        // The id was written by an attempt that gave up: nobody else takes it (at most once).
        #expect(try await !marker.mark([2, 2]))
    }

    @Test func anOutageThatEndsBeforeTheLastWriteLosesNothing() async throws {
        self.store.failing.store(true, ordering: .relaxed)
        let store = self.store
        let marker = StatusSeenMarker(store: store, pauses: [.milliseconds(50), .milliseconds(300), .seconds(10)])
        let marked = Task { try await marker.mark([3, 3]) }
        try await Task.sleep(for: .milliseconds(200))
        store.failing.store(false, ordering: .relaxed)
        #expect(try await marked.value)
    }

    @Test func aPushRequestWhoseSeenMarkAnswerWasLostIsAnsweredAndQueuedOnce() async throws {
        let client = try TestClient(server: StatusServerIdentity(privateKey: try Secp256k1.PrivateKey()).publicKey)
        let registration = client.registration()
        _ = try await self.store.saveStatusRegistration(
            StatusRegistrationRecord(
                publicKeyHash: client.keyHash, installationID: registration.installationID, version: registration.version,
                registration: try registration.serializedBytes()
            )
        )
        let sink = RecordingSink()
        let losing = LostAnswerStore(inner: self.store, answersToLose: 1)
        let handler = StatusPushRequestHandler(store: losing, delivery: sink, logger: .quiet, seenMarkPauses: [.milliseconds(1)])
        let request = try client.pushRequest([client.notification()])
        let first = try await handler.handle(client.inbound(type: 20, payload: request, signer: client.ephemeral))
        #expect(first?.0.reports.map(\.success) == [true])
        #expect(sink.queued.withLock { $0.count } == 1)
        // status-go sends the request again in a new envelope: the same message id gets no second answer.
        #expect(try await handler.handle(client.inbound(type: 20, payload: request, signer: client.ephemeral)) == nil)
        #expect(sink.queued.withLock { $0.count } == 1)
    }
}

/// Writes every seen mark to the inner store, then throws for the first `answersToLose` of them (the
/// store's deadline passed after the write landed).
final class LostAnswerStore: StatusServerStore {
    let inner: MemoryStatusStore
    let remaining: Atomic<Int>
    let marks = Atomic<Int>(0)
    struct LostAnswer: Error {}

    init(inner: MemoryStatusStore, answersToLose: Int) {
        self.inner = inner
        self.remaining = Atomic(answersToLose)
    }

    func markStatusMessageSeen(_ id: [UInt8], claim: [UInt8], seenAt: Date) async throws -> Bool {
        self.marks.add(1, ordering: .relaxed)
        let taken = try await self.inner.markStatusMessageSeen(id, claim: claim, seenAt: seenAt)
        if self.remaining.subtract(1, ordering: .relaxed).oldValue > 0 { throw LostAnswer() }
        return taken
    }

    func statusRegistration(publicKeyHash: [UInt8], installationID: String) async throws -> StatusRegistrationRecord? {
        try await self.inner.statusRegistration(publicKeyHash: publicKeyHash, installationID: installationID)
    }
    func statusRegistrations(publicKeyHashes: [[UInt8]]) async throws -> [StatusRegistrationRecord] {
        try await self.inner.statusRegistrations(publicKeyHashes: publicKeyHashes)
    }
    func saveStatusRegistration(_ record: StatusRegistrationRecord) async throws -> Bool { try await self.inner.saveStatusRegistration(record) }
    func dropStatusRegistration(publicKeyHash: [UInt8], installationID: String, version: UInt64) async throws -> Bool {
        try await self.inner.dropStatusRegistration(publicKeyHash: publicKeyHash, installationID: installationID, version: version)
    }
    func statusRegisteredKeyHashes() async throws -> [[UInt8]] { try await self.inner.statusRegisteredKeyHashes() }
    func pruneStatusMessagesSeen(before cutoff: Date) async throws -> Int { try await self.inner.pruneStatusMessagesSeen(before: cutoff) }
    func statusIdentity() async throws -> [UInt8]? { try await self.inner.statusIdentity() }
    func saveStatusIdentityIfAbsent(_ secret: [UInt8]) async throws -> [UInt8] { try await self.inner.saveStatusIdentityIfAbsent(secret) }
}
