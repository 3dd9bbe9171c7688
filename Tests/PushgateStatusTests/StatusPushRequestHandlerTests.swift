import Foundation
import Logging
import PushgateTestSupport
@testable import PushgateStatus
import PushgateStatusWire
import PushgateStore
import SwiftProtobuf
import Synchronization
import Testing

/// Push requests as status-go handles them (gorush-and-status.md §3.7): the reports, the filters, at most
/// once per message id, and no answer where status-go gives none.
@Suite("Status push requests")
struct StatusPushRequestHandlerTests {
    let server: StatusServerIdentity
    let store = MemoryStatusStore()
    let sink = RecordingSink()
    let handler: StatusPushRequestHandler
    let client: TestClient

    init() throws {
        self.server = StatusServerIdentity(privateKey: try Secp256k1.PrivateKey())
        self.handler = StatusPushRequestHandler(store: self.store, delivery: self.sink, logger: .quiet)
        self.client = try TestClient(server: self.server.publicKey)
    }

    func register(_ registration: Protobuf_PushNotificationRegistration) async throws {
        let saved = try await self.store.saveStatusRegistration(
            StatusRegistrationRecord(
                publicKeyHash: self.client.keyHash, installationID: registration.installationID, version: registration.version,
                registration: try registration.serializedBytes()
            )
        )
        #expect(saved)
    }

    func push(_ notifications: [Protobuf_PushNotification], messageID: [UInt8] = Array(repeating: 7, count: 32)) async throws -> Protobuf_PushNotificationResponse? {
        let inbound = try self.client.inbound(type: 20, payload: try self.client.pushRequest(notifications, messageID: messageID), signer: self.client.ephemeral)
        return await self.handler.handle(inbound)?.0
    }

    @Test func eachNotificationGetsItsReportAndOnlyWantedOnesAreQueued() async throws {
        var registration = self.client.registration()
        registration.blockedChatList = [Data(Keccak.shake256(Array("blocked".utf8), outputCount: 64))]
        try await self.register(registration)
        var unknownType = self.client.notification()
        unknownType.type = Protobuf_PushNotification.PushNotificationType(rawValue: 99) ?? .unknownPushNotificationType
        let notifications = [
            self.client.notification(),
            self.client.notification(accessToken: "e6ae4fde-bb65-11ea-b3de-0242ac130004"),
            self.client.notification(installationID: "f6ae4fde-bb65-11ea-b3de-0242ac130004"),
            self.client.notification(chat: "blocked"),
            unknownType,
        ]
        let response = try #require(try await self.push(notifications))
        #expect(Array(response.messageID) == Array(repeating: 7, count: 32))
        #expect(response.reports.map(\.success) == [true, false, false, true], "the unknown type gets no report")
        #expect(response.reports.map(\.error) == [.unknownErrorType, .wrongToken, .notRegistered, .unknownErrorType])
        #expect(response.reports[2].installationID == "f6ae4fde-bb65-11ea-b3de-0242ac130004")
        #expect(Array(response.reports[0].publicKey) == self.client.keyHash)
        let queued = self.sink.queued.withLock { $0 }
        #expect(queued.count == 1, "the blocked chat is reported as a success but not sent")
        #expect(queued.first?.version == 1 && queued.first?.installationID == TestClient.installationID)
    }


    @Test func aRepeatedMessageIDGetsNoSecondAnswerAndNothingMoreIsQueued() async throws {
        try await self.register(self.client.registration())
        #expect(try await self.push([self.client.notification()]) != nil)
        #expect(try await self.push([self.client.notification()]) == nil)
        #expect(self.sink.queued.withLock { $0.count } == 1)
        #expect(try await self.push([self.client.notification()], messageID: Array(repeating: 8, count: 32)) != nil, "another message id is another request")
    }

    @Test func anEmptyRequestOrOneWithoutMessageIDIsNotAnswered() async throws {
        try await self.register(self.client.registration())
        #expect(try await self.push([]) == nil)
        #expect(try await self.push([self.client.notification()], messageID: []) == nil)
        #expect(self.sink.queued.withLock { $0.isEmpty })
    }

    @Test func aStoreFailureReportsUnknownErrorType() async throws {
        try await self.register(self.client.registration())
        let inbound = try self.client.inbound(type: 20, payload: try self.client.pushRequest([self.client.notification()]), signer: self.client.ephemeral)
        // The seen-id write works, the registration read does not.
        #expect(try await self.store.markStatusMessageSeen([0], claim: [1], seenAt: Date()))
        let failingReads = ReadCheckedStore.failingReads(self.store)
        let handler = StatusPushRequestHandler(store: failingReads, delivery: self.sink, logger: .quiet)
        let response = try #require(await handler.handle(inbound)?.0)
        #expect(response.reports.map(\.error) == [.unknownErrorType] && response.reports.map(\.success) == [false])
    }

    /// What cannot go out is not claimed delivered: when the outbox refuses it, and when the
    /// registration's token type lost its app (a reload removed it).
    @Test(arguments: ["the outbox refuses", "no app serves the registration"])
    func whatCannotGoOutIsReportedAnInternalErrorAndNotQueued(_ cause: String) async throws {
        try await self.register(self.client.registration())
        if cause == "the outbox refuses" {
            self.sink.failing.store(true, ordering: .relaxed)
        } else {
            self.sink.serving.store(false, ordering: .relaxed)
        }
        let response = try #require(try await self.push([self.client.notification()]))
        #expect(response.reports.map(\.success) == [false])
        #expect(response.reports.map(\.error) == [.internalError])
        #expect(self.sink.queued.withLock { $0.isEmpty })
    }

    struct FilterCase: CustomTestStringConvertible, Sendable {
        let name: String
        let type: Protobuf_PushNotification.PushNotificationType
        let chat: String
        let author: String
        let wanted: Bool
        var testDescription: String { self.name }
    }

    static let filterCases = [
        FilterCase(name: "message in an open chat", type: .message, chat: "open", author: "friend", wanted: true),
        FilterCase(name: "message in a blocked chat", type: .message, chat: "blocked", author: "friend", wanted: false),
        FilterCase(name: "message in a muted chat", type: .message, chat: "muted", author: "friend", wanted: false),
        FilterCase(name: "message from a blocked author", type: .message, chat: "open", author: "blocked", wanted: false),
        FilterCase(name: "mention in an allowed chat", type: .mention, chat: "mentions-ok", author: "friend", wanted: true),
        FilterCase(name: "mention elsewhere", type: .mention, chat: "open", author: "friend", wanted: false),
        FilterCase(name: "mention from a blocked author", type: .mention, chat: "mentions-ok", author: "blocked", wanted: false),
        FilterCase(name: "community request", type: .requestToJoinCommunity, chat: "blocked", author: "friend", wanted: true),
        FilterCase(name: "community request from a blocked author", type: .requestToJoinCommunity, chat: "open", author: "blocked", wanted: false),
    ]

    @Test(arguments: Self.filterCases)
    func theRegistrantsListsFilterAsStatusGoDoes(_ filter: FilterCase) throws {
        let hash = { (text: String) in Data(Keccak.shake256(Array(text.utf8), outputCount: 64)) }
        var registration = self.client.registration()
        registration.blockedChatList = [hash("blocked")]
        registration.mutedChatList = [hash("muted")]
        registration.allowedMentionsChatList = [hash("mentions-ok")]
        var notification = self.client.notification(type: filter.type, chat: filter.chat)
        notification.author = hash(filter.author)
        #expect(StatusPushRequestHandler.isWanted(notification, by: registration) == filter.wanted)
    }

    @Test func blockMentionsDropsEveryMention() throws {
        var registration = self.client.registration()
        registration.allowedMentionsChatList = [Data(Keccak.shake256(Array("chat-1".utf8), outputCount: 64))]
        registration.blockMentions = true
        #expect(!StatusPushRequestHandler.isWanted(self.client.notification(type: .mention), by: registration))
    }
}

/// A store whose registration reads first pass `check` (which throws to fail them); every other call goes
/// to `inner` (the seen mark included, so a test reaches what follows it).
final class ReadCheckedStore: StatusServerStore {
    let inner: MemoryStatusStore
    let check: @Sendable () throws -> Void
    init(inner: MemoryStatusStore, check: @escaping @Sendable () throws -> Void) {
        self.inner = inner
        self.check = check
    }
    struct ReadFailure: Error {}
    /// Reads fail, writes pass (to reach the report of a failed registration read).
    static func failingReads(_ inner: MemoryStatusStore) -> ReadCheckedStore { ReadCheckedStore(inner: inner) { throw ReadFailure() } }
    /// Honours cancellation as the gateway's bounded store does: a cancelled caller's read fails at once.
    static func honouringCancellation(_ inner: MemoryStatusStore) -> ReadCheckedStore { ReadCheckedStore(inner: inner) { try Task.checkCancellation() } }

    func statusRegistration(publicKeyHash: [UInt8], installationID: String) async throws -> StatusRegistrationRecord? {
        try self.check()
        return try await self.inner.statusRegistration(publicKeyHash: publicKeyHash, installationID: installationID)
    }
    func statusRegistrations(publicKeyHashes: [[UInt8]]) async throws -> [StatusRegistrationRecord] {
        try self.check()
        return try await self.inner.statusRegistrations(publicKeyHashes: publicKeyHashes)
    }
    func saveStatusRegistration(_ record: StatusRegistrationRecord) async throws -> Bool { try await self.inner.saveStatusRegistration(record) }
    func dropStatusRegistration(publicKeyHash: [UInt8], installationID: String, version: UInt64) async throws -> Bool { false }
    func statusRegisteredKeyHashes() async throws -> [[UInt8]] { [] }
    func markStatusMessageSeen(_ id: [UInt8], claim: [UInt8], seenAt: Date) async throws -> Bool {
        try await self.inner.markStatusMessageSeen(id, claim: claim, seenAt: seenAt)
    }
    func pruneStatusMessagesSeen(before cutoff: Date) async throws -> Int { 0 }
    func statusIdentity() async throws -> [UInt8]? { nil }
    func saveStatusIdentityIfAbsent(_ secret: [UInt8]) async throws -> [UInt8] { secret }
}

extension StatusPushRequestHandlerTests {
    @Test func aStoreCallCutShortByAStopIsNotLoggedAsAnError() async throws {
        // A graceful stop cancels the handling of messages under way (the store backfill's among them): their
        // seen marks fail, and they stay unanswered until the next start catches them up again.
        self.store.failing.store(true, ordering: .relaxed)
        let log = LogRecorder()
        let handler = StatusPushRequestHandler(store: self.store, delivery: self.sink, logger: log.logger(), seenMarkPauses: [.milliseconds(1)])
        let inbound = try self.client.inbound(type: 20, payload: try self.client.pushRequest([self.client.notification()]), signer: self.client.ephemeral)
        let stopping = Task {
            while !Task.isCancelled { await Task.yield() }
            return await handler.handle(inbound)
        }
        stopping.cancel()
        #expect(await stopping.value == nil)
        #expect(log.all.map(\.level) == [.debug])
        // Not stopping, the same failure is an error.
        #expect(await handler.handle(inbound) == nil)
        #expect(log.all.map(\.level) == [.debug, .error])
    }
}

/// Queues only for a caller that is not cancelled, as the outbox's bounded store calls do.
final class CancellationHonouringSink: StatusNotificationSink {
    let inner = RecordingSink()
    func deliver(_ accepted: [StatusAccepted]) async throws {
        try Task.checkCancellation()
        try await self.inner.deliver(accepted)
    }
    func serves(_ registration: Protobuf_PushNotificationRegistration) -> Bool { true }
}

extension StatusPushRequestHandlerTests {
    /// A stop that cancels the handling just after the request was marked seen: the request is still
    /// read, reported on and queued (marked seen, the next start's backfill would skip it, so a request cut
    /// short there would be lost for good).
    @Test func aRequestMarkedSeenIsQueuedEvenWhenAStopCancelsItsHandling() async throws {
        try await self.register(self.client.registration())
        let sink = CancellationHonouringSink()
        let handler = StatusPushRequestHandler(store: ReadCheckedStore.honouringCancellation(self.store), delivery: sink, logger: .quiet)
        let inbound = try self.client.inbound(type: 20, payload: try self.client.pushRequest([self.client.notification()]), signer: self.client.ephemeral)
        let stopping = Task {
            while !Task.isCancelled { await Task.yield() }
            return await handler.handle(inbound)
        }
        stopping.cancel()
        let answer = try #require(await stopping.value)
        #expect(answer.0.reports.map(\.success) == [true])
        #expect(answer.queued == 1)
        #expect(sink.inner.queued.withLock { $0.count } == 1)
    }
}
