import Foundation
import Logging
@testable import PushgateStatus
import PushgateStatusWire
import PushgateStore
import SwiftProtobuf
import Synchronization

/// A StatusServerStore in memory, with the conditional writes the real stores make.
final class MemoryStatusStore: StatusServerStore {
    private struct Key: Hashable {
        let hash: [UInt8]
        let installation: String
    }
    private struct State {
        var rows: [Key: StatusRegistrationRecord] = [:]
        var seen: [[UInt8]: (at: Date, claim: [UInt8])] = [:]
        var identity: [UInt8]?
    }
    private let state = Mutex(State())
    /// When set, every call fails (a store outage).
    let failing = Atomic<Bool>(false)

    struct Outage: Error {}

    private func check() throws {
        if self.failing.load(ordering: .relaxed) { throw Outage() }
    }

    func statusRegistration(publicKeyHash: [UInt8], installationID: String) async throws -> StatusRegistrationRecord? {
        try self.check()
        return self.state.withLock { $0.rows[Key(hash: publicKeyHash, installation: installationID)] }
    }

    func statusRegistrations(publicKeyHashes: [[UInt8]]) async throws -> [StatusRegistrationRecord] {
        try self.check()
        let wanted = Set(publicKeyHashes)
        return self.state.withLock { state in state.rows.values.filter { wanted.contains($0.publicKeyHash) && $0.registration != nil } }
    }

    func saveStatusRegistration(_ record: StatusRegistrationRecord) async throws -> Bool {
        try self.check()
        return self.state.withLock { state in
            let key = Key(hash: record.publicKeyHash, installation: record.installationID)
            if let stored = state.rows[key], stored.version >= record.version { return false }
            state.rows[key] = record
            return true
        }
    }

    func dropStatusRegistration(publicKeyHash: [UInt8], installationID: String, version: UInt64) async throws -> Bool {
        try self.check()
        return self.state.withLock { state in
            let key = Key(hash: publicKeyHash, installation: installationID)
            guard let stored = state.rows[key], stored.version == version, stored.registration != nil else { return false }
            state.rows[key]?.registration = nil
            return true
        }
    }

    func statusRegisteredKeyHashes() async throws -> [[UInt8]] {
        try self.check()
        return self.state.withLock { Array(Set($0.rows.values.filter { $0.registration != nil }.map(\.publicKeyHash))) }
    }

    func markStatusMessageSeen(_ id: [UInt8], claim: [UInt8], seenAt: Date) async throws -> Bool {
        try self.check()
        return self.state.withLock { state in
            if let stored = state.seen[id] { return stored.claim == claim }
            state.seen[id] = (seenAt, claim)
            return true
        }
    }

    func pruneStatusMessagesSeen(before cutoff: Date) async throws -> Int {
        try self.check()
        return self.state.withLock { state in
            let old = state.seen.filter { $0.value.at < cutoff }.map(\.key)
            for id in old { state.seen[id] = nil }
            return old.count
        }
    }

    func statusIdentity() async throws -> [UInt8]? {
        try self.check()
        return self.state.withLock { $0.identity }
    }

    func saveStatusIdentityIfAbsent(_ secret: [UInt8]) async throws -> [UInt8] {
        try self.check()
        return self.state.withLock { state in
            if let identity = state.identity { return identity }
            state.identity = secret
            return secret
        }
    }
}

/// Records what the push handler queued.
final class RecordingSink: StatusNotificationSink {
    let queued = Mutex<[StatusAccepted]>([])
    let failing = Atomic<Bool>(false)

    struct Full: Error {}

    /// Whether every registration has an app (false: none has).
    let serving = Atomic<Bool>(true)

    func deliver(_ accepted: [StatusAccepted]) async throws {
        if self.failing.load(ordering: .relaxed) { throw Full() }
        self.queued.withLock { $0 += accepted }
    }

    func serves(_ registration: Protobuf_PushNotificationRegistration) -> Bool {
        self.serving.load(ordering: .relaxed)
    }
}

/// A status-go-like client built on the wire module, for the handler tests (the end-to-end tests use the
/// independent Python client instead).
struct TestClient {
    let identity: Secp256k1.PrivateKey
    let ephemeral: Secp256k1.PrivateKey
    let server: Secp256k1.PublicKey

    init(server: Secp256k1.PublicKey) throws {
        self.identity = try Secp256k1.PrivateKey()
        self.ephemeral = try Secp256k1.PrivateKey()
        self.server = server
    }

    var keyHash: [UInt8] { StatusTopic.keyHash(self.identity.publicKey) }

    static let installationID = "c6ae4fde-bb65-11ea-b3de-0242ac130004"
    static let accessToken = "b6ae4fde-bb65-11ea-b3de-0242ac130004"

    func registration(
        version: UInt64 = 1, token: String = "abcd", tokenType: Protobuf_PushNotificationRegistration.TokenType = .apnToken,
        accessToken: String = Self.accessToken, installationID: String = Self.installationID
    ) -> Protobuf_PushNotificationRegistration {
        var registration = Protobuf_PushNotificationRegistration()
        registration.tokenType = tokenType
        registration.deviceToken = token
        registration.installationID = installationID
        registration.accessToken = accessToken
        registration.enabled = true
        registration.version = version
        registration.apnTopic = "im.status.ethereum"
        registration.grant = Data(self.grant(accessToken: accessToken))
        return registration
    }

    func grant(accessToken: String, signer: Secp256k1.PrivateKey? = nil) -> [UInt8] {
        (signer ?? self.identity).signRecoverable(hash32: StatusGrant.material(clientKey: self.identity.publicKey, serverKey: self.server, accessToken: accessToken))
    }

    /// The encrypted registration blob (the AMM payload).
    func sealed(_ registration: Protobuf_PushNotificationRegistration) throws -> [UInt8] {
        try RegistrationCipher.seal(try registration.serializedBytes(), key: self.identity.sharedSecretX(with: self.server))
    }

    /// An inbound message as the server sees it once opened.
    func inbound(type: Int, payload: [UInt8], signer: Secp256k1.PrivateKey) throws -> StatusInboundMessage {
        let amm = try StatusProbe.amm(payload: payload, type: type, signer: signer)
        return try StatusEnvelopeOpener.application(amm, wakuSigner: self.identity.publicKey)
    }

    func notification(
        type: Protobuf_PushNotification.PushNotificationType = .message, chat: String = "chat-1", author: String? = nil,
        accessToken: String = Self.accessToken, installationID: String = Self.installationID
    ) -> Protobuf_PushNotification {
        var notification = Protobuf_PushNotification()
        notification.accessToken = accessToken
        notification.chatID = Data(Keccak.shake256(Array(chat.utf8), outputCount: 64))
        notification.publicKey = Data(self.keyHash)
        notification.installationID = installationID
        notification.type = type
        notification.author = Data(Keccak.shake256(Array((author ?? "0xauthor").utf8), outputCount: 64))
        notification.message = Data([1, 2, 3])
        return notification
    }

    func pushRequest(_ notifications: [Protobuf_PushNotification], messageID: [UInt8] = Array(repeating: 7, count: 32)) throws -> [UInt8] {
        var request = Protobuf_PushNotificationRequest()
        request.requests = notifications
        request.messageID = Data(messageID)
        return try request.serializedBytes()
    }
}

extension Logger {
    static let quiet: Logger = {
        var logger = Logger(label: "pushgate.status.tests")
        logger.logLevel = .critical
        return logger
    }()
}
