import Foundation
import PushgateConfig
@testable import PushgateStatus
import PushgateStatusWire
import PushgateStore
import SwiftProtobuf
import Synchronization
import Testing

/// Registration handling in status-go's validation order (gorush-and-status.md §3.4): each step's answer,
/// and what is stored.
@Suite("Status registrations")
struct StatusRegistrationHandlerTests {
    let server: StatusServerIdentity
    let store = MemoryStatusStore()
    let topics: StatusListeningTopics
    let handler: StatusRegistrationHandler
    let client: TestClient

    init() throws {
        self.server = StatusServerIdentity(privateKey: try Secp256k1.PrivateKey())
        self.topics = StatusListeningTopics(identity: self.server)
        self.handler = StatusRegistrationHandler(identity: self.server, store: self.store, topics: self.topics, logger: .quiet)
        self.client = try TestClient(server: self.server.publicKey)
    }

    func register(_ payload: [UInt8], signer: Secp256k1.PrivateKey? = nil) async throws -> (Protobuf_PushNotificationRegistrationResponse, StatusRegistrationHandler.Result) {
        let inbound = try self.client.inbound(type: 16, payload: payload, signer: signer ?? self.client.identity)
        let answer = await self.handler.handle(inbound)
        #expect(Array(answer.0.requestID) == Keccak.shake256(payload, outputCount: 64), "request_id is the SHAKE-256 of the encrypted payload, whatever the outcome")
        return answer
    }

    @Test func aValidRegistrationIsStoredAndItsQueryTopicListenedOn() async throws {
        let registration = self.client.registration()
        let (response, result) = try await self.register(try self.client.sealed(registration))
        #expect(response.success && response.error == .unknownErrorType && result == .registered)
        let stored = try #require(try await self.store.statusRegistration(publicKeyHash: self.client.keyHash, installationID: TestClient.installationID))
        #expect(stored.version == 1)
        #expect(stored.registration == (try registration.serializedBytes()))
        let queryTopic = StatusTopic.contentTopic(forName: StatusTopic.queryName(forKeyHash: self.client.keyHash))
        #expect(self.topics.key(for: queryTopic) != nil)
    }

    /// One row per step of the validation order.
    enum Case: String, CaseIterable, CustomTestStringConvertible {
        case emptyPayload, undecryptable, notAProtobuf, versionZero, installationNotUUID, accessTokenNotUUID, noGrant, grantBySomeoneElse,
            grantOverAnotherToken, emptyDeviceToken, unknownTokenType
        var testDescription: String { self.rawValue }
    }

    @Test(arguments: Case.allCases)
    func eachRefusalGetsStatusGosCode(_ refusal: Case) async throws {
        let client = self.client
        var registration = client.registration()
        var payload: [UInt8]?
        switch refusal {
        case .emptyPayload: payload = []
        case .undecryptable: payload = try RegistrationCipher.seal(try registration.serializedBytes(), key: Array(repeating: 9, count: 32))
        case .notAProtobuf: payload = try RegistrationCipher.seal([0xff, 0xff, 0xff], key: client.identity.sharedSecretX(with: client.server))
        case .versionZero: registration.version = 0
        case .installationNotUUID: registration.installationID = "installation-1"
        case .accessTokenNotUUID:
            registration.accessToken = "not-a-uuid"
            registration.grant = Data(client.grant(accessToken: "not-a-uuid"))
        case .noGrant: registration.grant = Data()
        case .grantBySomeoneElse: registration.grant = Data(client.grant(accessToken: TestClient.accessToken, signer: try Secp256k1.PrivateKey()))
        case .grantOverAnotherToken: registration.grant = Data(client.grant(accessToken: "d6ae4fde-bb65-11ea-b3de-0242ac130004"))
        case .emptyDeviceToken: registration.deviceToken = ""
        case .unknownTokenType: registration.tokenType = .unknownTokenType
        }
        let (response, _) = try await self.register(try payload ?? client.sealed(registration))
        #expect(!response.success)
        #expect(response.error == (refusal == .versionZero ? .versionMismatch : .malformedMessage))
        #expect(try await self.store.statusRegistration(publicKeyHash: client.keyHash, installationID: TestClient.installationID) == nil)
    }

    /// A token type no configured app delivers to is refused as such, not stored to be answered SUCCESS
    /// and sent nowhere later.
    @Test func aTokenTypeNoAppServesIsUnsupported() async throws {
        let handler = StatusRegistrationHandler(
            identity: self.server, store: self.store, topics: self.topics, logger: .quiet, serves: { $0.tokenType == .apnToken }
        )
        var registration = self.client.registration()
        registration.tokenType = .firebaseToken
        let (response, result) = await handler.handle(try self.client.inbound(type: 16, payload: try self.client.sealed(registration), signer: self.client.identity))
        #expect(!response.success && response.error == .unsupportedTokenType && result == .unsupportedTokenType)
        #expect(try await self.store.statusRegistration(publicKeyHash: self.client.keyHash, installationID: TestClient.installationID) == nil)
        registration.tokenType = .apnToken
        let (accepted, _) = await handler.handle(try self.client.inbound(type: 16, payload: try self.client.sealed(registration), signer: self.client.identity))
        #expect(accepted.success)
    }

    /// Which registrations the delivery serves: the token type's app (or an APNs app by topic), or
    /// every one when a gorush forwards them.
    @Test func theDeliveryServesTheTokenTypesItHasAppsFor() {
        var settings = StatusSettings(wakuRESTURL: "http://127.0.0.1:8645")
        settings.iosApp = "ios"
        var apns = Protobuf_PushNotificationRegistration()
        apns.tokenType = .apnToken
        var fcm = Protobuf_PushNotificationRegistration()
        fcm.tokenType = .firebaseToken
        var byTopic = apns
        byTopic.apnTopic = "im.example.other"
        var unknown = Protobuf_PushNotificationRegistration()
        unknown.tokenType = .unknownTokenType
        #expect(StatusDelivery.serves(apns, settings: settings, apnsAppsByTopic: [:]))
        #expect(!StatusDelivery.serves(fcm, settings: settings, apnsAppsByTopic: [:]))
        #expect(!StatusDelivery.serves(unknown, settings: settings, apnsAppsByTopic: [:]))
        settings.iosApp = nil
        #expect(!StatusDelivery.serves(apns, settings: settings, apnsAppsByTopic: [:]))
        #expect(StatusDelivery.serves(byTopic, settings: settings, apnsAppsByTopic: ["im.example.other": "other"]))
        settings.gorushURL = "http://127.0.0.1:8088"
        #expect(StatusDelivery.serves(fcm, settings: settings, apnsAppsByTopic: [:]))
    }

    @Test func aVersionNotAboveTheStoredOneIsAMismatchAndAHigherOneReplacesIt() async throws {
        _ = try await self.register(try self.client.sealed(self.client.registration(version: 3)))
        for stale in [UInt64(1), 3] {
            let (response, result) = try await self.register(try self.client.sealed(self.client.registration(version: stale, token: "other")))
            #expect(!response.success && response.error == .versionMismatch && result == .versionMismatch)
        }
        let (response, _) = try await self.register(try self.client.sealed(self.client.registration(version: 4, token: "newer")))
        #expect(response.success)
        let stored = try #require(try await self.store.statusRegistration(publicKeyHash: self.client.keyHash, installationID: TestClient.installationID))
        #expect(stored.version == 4)
    }

    @Test func anUnregisterNeedsNoTokenAndKeepsOnlyTheVersion() async throws {
        _ = try await self.register(try self.client.sealed(self.client.registration(version: 1)))
        var unregister = Protobuf_PushNotificationRegistration()
        unregister.installationID = TestClient.installationID
        unregister.version = 2
        unregister.unregister = true
        unregister.grant = Data(self.client.grant(accessToken: ""))
        let (response, result) = try await self.register(try self.client.sealed(unregister))
        #expect(response.success && result == .unregistered)
        let stored = try #require(try await self.store.statusRegistration(publicKeyHash: self.client.keyHash, installationID: TestClient.installationID))
        #expect(stored.version == 2 && stored.registration == nil)
        #expect(try await self.store.statusRegistrations(publicKeyHashes: [self.client.keyHash]).isEmpty)
        // The next refresh from the store stops listening on the key's query topic.
        let queryTopic = StatusTopic.contentTopic(forName: StatusTopic.queryName(forKeyHash: self.client.keyHash))
        #expect(self.topics.key(for: queryTopic) != nil)
        let refresh = self.topics.beginRefresh()
        self.topics.finishRefresh(refresh, registered: try await self.store.statusRegisteredKeyHashes())
        #expect(self.topics.key(for: queryTopic) == nil)
        #expect(self.topics.queryTopicCount == 0)
    }

    @Test func aRefreshKeepsAKeyRegisteredWhileTheStoreWasRead() async throws {
        let refresh = self.topics.beginRefresh()
        let registered = try await self.store.statusRegisteredKeyHashes()
        #expect(registered.isEmpty)
        _ = try await self.register(try self.client.sealed(self.client.registration()))
        self.topics.finishRefresh(refresh, registered: registered)
        let queryTopic = StatusTopic.contentTopic(forName: StatusTopic.queryName(forKeyHash: self.client.keyHash))
        #expect(self.topics.key(for: queryTopic) != nil, "the registration saved during the read keeps its topic")
        // A key registered by another instance on the same database is listened on after the next refresh.
        let other = try TestClient(server: self.server.publicKey)
        let otherTopic = StatusTopic.contentTopic(forName: StatusTopic.queryName(forKeyHash: other.keyHash))
        #expect(self.topics.key(for: otherTopic) == nil)
        let next = self.topics.beginRefresh()
        self.topics.finishRefresh(next, registered: [self.client.keyHash, other.keyHash])
        #expect(self.topics.key(for: otherTopic) != nil && self.topics.key(for: queryTopic) != nil)
        #expect(self.topics.queryTopicCount == 2)
    }

    @Test func aStoreFailureIsAnInternalError() async throws {
        self.store.failing.store(true, ordering: .relaxed)
        let (response, result) = try await self.register(try self.client.sealed(self.client.registration()))
        #expect(!response.success && response.error == .internalError && result == .internalError)
    }

    @Test func theRegistrationIsKeyedByTheAMMSignerNotTheWakuSigner() async throws {
        // A registration whose AMM is signed by another key than the Waku frame is the AMM signer's.
        let other = try TestClient(server: self.server.publicKey)
        let sealed = try other.sealed(other.registration())
        let amm = try StatusProbe.amm(payload: sealed, type: 16, signer: other.identity)
        let inbound = try StatusEnvelopeOpener.application(amm, wakuSigner: self.client.identity.publicKey)
        #expect(inbound.sender == other.identity.publicKey)
        let (response, _) = await self.handler.handle(inbound)
        #expect(response.success)
        #expect(try await self.store.statusRegistration(publicKeyHash: other.keyHash, installationID: TestClient.installationID) != nil)
    }
}

extension StatusRegistrationHandlerTests {
    /// An AMM without a signature is the Waku frame signer's, and its message id is Keccak-256 of the
    /// AMM alone (status-go's `MessageID` with no author key), not of the frame signer's key and the AMM.
    @Test func anUnsignedAMMsIdLeavesTheAuthorKeyOut() throws {
        var amm = Protobuf_ApplicationMetadataMessage()
        amm.payload = Data([1, 2, 3])
        amm.type = Protobuf_ApplicationMetadataMessage.TypeEnum(rawValue: 18) ?? .unknown
        let bytes: [UInt8] = try amm.serializedBytes()
        let inbound = try StatusEnvelopeOpener.application(bytes, wakuSigner: self.client.identity.publicKey)
        #expect(inbound.sender == self.client.identity.publicKey)
        #expect(inbound.messageID == Keccak.keccak256(bytes))
        // A signed one's id covers its signer's key.
        let signed = try StatusProbe.amm(payload: [1, 2, 3], type: 18, signer: self.client.identity)
        let signedInbound = try StatusEnvelopeOpener.application(signed, wakuSigner: self.client.identity.publicKey)
        #expect(signedInbound.messageID == Keccak.keccak256(self.client.identity.publicKey.uncompressed + signed))
    }
}
