import Foundation
import PushgateConfig
@testable import PushgateStatus
import PushgateStatusWire
import PushgateStore
import SwiftProtobuf
import Synchronization
import Testing

/// Queries (gorush-and-status.md §3.6) and the answers' wrapping (status-wire.md §1.4).
@Suite("Status queries and answers")
struct StatusQueryAndAnswerTests {
    let server: StatusServerIdentity
    let store = MemoryStatusStore()
    let client: TestClient

    init() throws {
        self.server = StatusServerIdentity(privateKey: try Secp256k1.PrivateKey())
        self.client = try TestClient(server: self.server.publicKey)
    }

    func save(_ registration: Protobuf_PushNotificationRegistration) async throws {
        _ = try await self.store.saveStatusRegistration(
            StatusRegistrationRecord(
                publicKeyHash: self.client.keyHash, installationID: registration.installationID, version: registration.version,
                registration: try registration.serializedBytes()
            )
        )
    }

    func query(_ keys: [[UInt8]]) async throws -> (Protobuf_PushNotificationQueryResponse?, StatusInboundMessage) {
        var query = Protobuf_PushNotificationQuery()
        query.publicKeys = keys.map { Data($0) }
        let inbound = try self.client.inbound(type: 18, payload: try query.serializedBytes(), signer: self.client.ephemeral)
        return (await StatusQueryHandler(store: self.store, logger: .quiet).handle(inbound), inbound)
    }

    @Test func aQueryReturnsTheAccessTokenOrTheAllowedKeyList() async throws {
        try await self.save(self.client.registration())
        var contactsOnly = self.client.registration(installationID: "d6ae4fde-bb65-11ea-b3de-0242ac130004")
        contactsOnly.allowFromContactsOnly = true
        contactsOnly.allowedKeyList = [Data([1, 2]), Data([3])]
        try await self.save(contactsOnly)
        let (answer, inbound) = try await self.query([self.client.keyHash, Array(repeating: 5, count: 64)])
        let response = try #require(answer)
        #expect(response.success)
        #expect(Array(response.messageID) == inbound.messageID, "message_id is the query's Status message id")
        let byInstallation = Dictionary(uniqueKeysWithValues: response.info.map { ($0.installationID, $0) })
        #expect(byInstallation.count == 2)
        let open = try #require(byInstallation[TestClient.installationID])
        #expect(open.accessToken == TestClient.accessToken && open.allowedKeyList.isEmpty)
        #expect(Array(open.publicKey) == self.client.keyHash && open.version == 1 && open.grant == self.client.registration().grant)
        let closed = try #require(byInstallation["d6ae4fde-bb65-11ea-b3de-0242ac130004"])
        #expect(closed.accessToken.isEmpty && closed.allowedKeyList == [Data([1, 2]), Data([3])])
    }

    @Test func noMatchIsASuccessAndAnEmptyQueryOrAStoreFailureIsNot() async throws {
        let (none, _) = try await self.query([Array(repeating: 5, count: 64)])
        #expect(none?.success == true && none?.info.isEmpty == true)
        let (empty, _) = try await self.query([])
        #expect(empty?.success == false)
        self.store.failing.store(true, ordering: .relaxed)
        let (failed, _) = try await self.query([self.client.keyHash])
        #expect(failed?.success == false)
    }

    @Test func anAnswerOpensWithTheRecipientsKeyAndIsSignedTwiceByTheServer() throws {
        var response = Protobuf_PushNotificationResponse()
        response.messageID = Data([9, 9])
        let message = try StatusAnswer(identity: self.server).message(response, kind: .pushResponse, to: self.client.ephemeral.publicKey, nowNanoseconds: 1_700_000_000_000_000_123)
        #expect(message.version == 1 && !message.ephemeral && message.meta.isEmpty && message.timestamp == 1_700_000_000_000_000_123)
        #expect(message.contentTopic == StatusTopic.contentTopic(forName: StatusTopic.partitionedName(for: self.client.ephemeral.publicKey)))
        let frame = try ECIES.decrypt(message.payload, with: self.client.ephemeral)
        let decoded = try WakuPayload.decode(frame)
        #expect(decoded.signer == self.server.publicKey, "the Waku payload is signed by the server identity")
        #expect(frame.count % 256 == 0, "the frame with its signature is padded to a multiple of 256")
        let opened = try StatusEnvelopeOpener.application(decoded.data, wakuSigner: self.client.identity.publicKey)
        #expect(opened.type == 21 && opened.sender == self.server.publicKey, "the AMM is signed by the server identity")
        #expect(try Protobuf_PushNotificationResponse(serializedBytes: opened.payload) == response)
        #expect(throws: (any Error).self) { try ECIES.decrypt(message.payload, with: self.client.identity) }
    }

    @Test func theGorushBodiesAreStatusGosOfEachGeneration() throws {
        var registration = self.client.registration(token: "apns-token")
        registration.apnTopic = "im.status.ethereum"
        var notification = Protobuf_PushNotification()
        notification.chatID = Data("chat-id".utf8)
        notification.publicKey = Data("public-key-1".utf8)
        notification.message = Data("message-1".utf8)
        notification.type = .message
        var fcm = registration
        fcm.tokenType = .firebaseToken
        fcm.deviceToken = "fcm-token"
        fcm.apnTopic = ""
        var mention = notification
        mention.type = .mention
        let items = [
            StatusGorushRequest.Item(notification: notification, registration: registration),
            StatusGorushRequest.Item(notification: mention, registration: fcm),
        ]
        let legacy = StatusGorushRequest(style: .legacy, texts: .defaults(for: .legacy)).body(items)
        #expect(
            String(decoding: legacy, as: UTF8.self)
                == #"{"notifications":[{"tokens":["apns-token"],"platform":1,"message":"You have a new message","topic":"im.status.ethereum","data":{"encryptedMessage":"0x6d6573736167652d31","chatId":"0x636861742d6964","publicKey":"0x7075626c69632d6b65792d31"}},{"tokens":["fcm-token"],"platform":2,"message":"Someone mentioned you","topic":"","data":{"encryptedMessage":"0x6d6573736167652d31","chatId":"0x636861742d6964","publicKey":"0x7075626c69632d6b65792d31"}}]}"#
        )
        let current = StatusGorushRequest(style: .current, texts: .defaults(for: .current)).body(items)
        #expect(
            String(decoding: current, as: UTF8.self)
                == #"{"notifications":[{"tokens":["apns-token"],"platform":1,"message":"New message in Messenger","topic":"im.status.ethereum","content_available":true,"sound":"default","priority":"high","push_type":"alert","data":{"encryptedMessage":"0x6d6573736167652d31","chatId":"0x636861742d6964","publicKey":"0x7075626c69632d6b65792d31","deepLink":"status-app://chats"}},{"tokens":["fcm-token"],"platform":2,"message":"New mention or reply in Communities","topic":"","data":{"encryptedMessage":"0x6d6573736167652d31","chatId":"0x636861742d6964","publicKey":"0x7075626c69632d6b65792d31"}}]}"#
        )
    }

    @Test(arguments: ["c6ae4fde-bb65-11ea-b3de-0242ac130004", "{c6ae4fde-bb65-11ea-b3de-0242ac130004}", "urn:uuid:C6AE4FDE-BB65-11EA-B3DE-0242AC130004", "c6ae4fdebb6511eab3de0242ac130004"])
    func uuidsParseAsStatusGoParsesThem(_ text: String) {
        #expect(StatusUUID.isValid(text))
    }

    @Test(arguments: ["", "c6ae4fde-bb65-11ea-b3de-0242ac13000", "c6ae4fde_bb65-11ea-b3de-0242ac130004", "g6ae4fde-bb65-11ea-b3de-0242ac130004", "installation"])
    func otherStringsAreNotUUIDs(_ text: String) {
        #expect(!StatusUUID.isValid(text))
    }
}
