import Foundation
public import PushgateStatusWire
import SwiftProtobuf
import PushgateCore

/// An operator's smoke test of a Status push notification server through a real Waku node: acts as a
/// status-go client with a throw-away identity — registers a device token, queries the registration
/// back, asks for a push to that token, and unregisters — and reports each step with its round-trip
/// time. The node it talks through should not be the one the server polls (a poll takes messages out of
/// the node's cache, so two pollers on one node steal each other's messages).
public struct StatusProbe: Sendable {
    /// What the probe registers.
    public struct Device: Sendable {
        /// APN_TOKEN (true) or FIREBASE_TOKEN (false).
        public var isAPNs: Bool
        /// The device token.
        public var token: String
        /// The registration's `apn_topic` (selects the server's APNs app).
        public var apnTopic: String

        /// Creates a device description.
        public init(isAPNs: Bool, token: String, apnTopic: String = "") {
            self.isAPNs = isAPNs
            self.token = token
            self.apnTopic = apnTopic
        }
    }

    /// One step's result.
    public struct Step: Sendable {
        /// `register`, `query`, `push`, `unregister`.
        public let name: String
        /// Whether the server answered as status-go expects.
        public let passed: Bool
        /// What was seen (never a secret).
        public let detail: String
        /// From publish to the answer.
        public let roundTrip: Duration
    }

    let relay: any WakuRelay
    let pubsubTopic: String
    let serverKey: Secp256k1.PublicKey
    let timeout: Duration

    /// A probe of the server with public key `serverKey`, through `relay`.
    public init(relay: any WakuRelay, pubsubTopic: String, serverKey: Secp256k1.PublicKey, timeout: Duration) {
        self.relay = relay
        self.pubsubTopic = pubsubTopic
        self.serverKey = serverKey
        self.timeout = timeout
    }

    /// Runs the four steps, stopping at the first that fails; `report` hears each as it ends.
    public func run(device: Device, report: @Sendable (Step) -> Void) async -> Bool {
        do {
            let identity = try Secp256k1.PrivateKey()
            let ephemeral = try Secp256k1.PrivateKey()
            try await self.relay.subscribe(pubsubTopic: self.pubsubTopic)
            let installationID = UUID().uuidString.lowercased()
            let accessToken = UUID().uuidString.lowercased()
            let steps: [(String, () async throws -> (Bool, String))] = [
                ("register", { try await self.register(identity: identity, device: device, installationID: installationID, accessToken: accessToken, version: 1, unregister: false) }),
                ("query", { try await self.query(identity: identity, ephemeral: ephemeral, installationID: installationID, accessToken: accessToken) }),
                ("push", { try await self.push(identity: identity, ephemeral: ephemeral, installationID: installationID, accessToken: accessToken) }),
                ("unregister", { try await self.register(identity: identity, device: device, installationID: installationID, accessToken: "", version: 2, unregister: true) }),
            ]
            for (name, step) in steps {
                let start = ContinuousClock.now
                let (passed, detail) = try await step()
                report(Step(name: name, passed: passed, detail: detail, roundTrip: ContinuousClock.now - start))
                if !passed { return false }
            }
            return true
        } catch {
            report(Step(name: "probe", passed: false, detail: "\(error)", roundTrip: .zero))
            return false
        }
    }

    private func register(
        identity: Secp256k1.PrivateKey, device: Device, installationID: String, accessToken: String, version: UInt64, unregister: Bool
    ) async throws -> (Bool, String) {
        var registration = Protobuf_PushNotificationRegistration()
        registration.tokenType = device.isAPNs ? .apnToken : .firebaseToken
        registration.deviceToken = device.token
        registration.installationID = installationID
        registration.accessToken = accessToken
        registration.enabled = !unregister
        registration.version = version
        registration.unregister = unregister
        registration.apnTopic = device.apnTopic
        registration.grant = Data(identity.signRecoverable(
            hash32: StatusGrant.material(clientKey: identity.publicKey, serverKey: self.serverKey, accessToken: accessToken)
        ))
        let key = identity.sharedSecretX(with: self.serverKey)
        let sealed = try RegistrationCipher.seal(try registration.serializedBytes(), key: key)
        let message = try Self.asymmetric(
            payload: sealed, type: 16, ammSigner: identity, wakuSigner: identity, to: self.serverKey,
            contentTopic: StatusTopic.contentTopic(forName: StatusTopic.personalName(for: self.serverKey))
        )
        try await self.relay.publish(message, pubsubTopic: self.pubsubTopic)
        guard let answer = try await self.awaitAnswer(type: 17, recipient: identity),
            let response = try? Protobuf_PushNotificationRegistrationResponse(serializedBytes: answer)
        else { return (false, "no registration response within \(self.timeout)") }
        guard Array(response.requestID) == Keccak.shake256(sealed, outputCount: 64) else { return (false, "the response's request_id is not this registration's") }
        return response.success ? (true, "success") : (false, "refused: \(response.error)")
    }

    private func query(identity: Secp256k1.PrivateKey, ephemeral: Secp256k1.PrivateKey, installationID: String, accessToken: String) async throws -> (Bool, String) {
        let keyHash = StatusTopic.keyHash(identity.publicKey)
        var query = Protobuf_PushNotificationQuery()
        query.publicKeys = [Data(keyHash)]
        let payload: [UInt8] = try query.serializedBytes()
        let amm = try Self.amm(payload: payload, type: 18, signer: ephemeral)
        let messageID = StatusMessageID.compute(author: ephemeral.publicKey, data: amm)
        let name = StatusTopic.queryName(forKeyHash: keyHash)
        let frame = WakuPayload.encode(data: amm, signer: identity)
        let sealed = try WakuPayload.sealSymmetric(frame, key: StatusTopic.symmetricKey(forName: name))
        try await self.relay.publish(
            WakuMessage(payload: sealed, contentTopic: StatusTopic.contentTopic(forName: name), version: 1, timestamp: Self.nowNanoseconds()),
            pubsubTopic: self.pubsubTopic
        )
        guard let answer = try await self.awaitAnswer(type: 19, recipient: ephemeral),
            let response = try? Protobuf_PushNotificationQueryResponse(serializedBytes: answer)
        else { return (false, "no query response within \(self.timeout)") }
        guard response.success, Array(response.messageID) == messageID else { return (false, "unsuccessful, or for another query") }
        guard let info = response.info.first(where: { $0.installationID == installationID }), info.accessToken == accessToken,
            Array(info.publicKey) == keyHash
        else { return (false, "the registration is not in the answer") }
        return (true, "\(response.info.count) registration(s)")
    }

    private func push(identity: Secp256k1.PrivateKey, ephemeral: Secp256k1.PrivateKey, installationID: String, accessToken: String) async throws -> (Bool, String) {
        let identityHex = "0x" + Hex.lowercase(identity.publicKey.uncompressed)
        var notification = Protobuf_PushNotification()
        notification.accessToken = accessToken
        notification.chatID = Data(Keccak.shake256(Array(identityHex.utf8), outputCount: 64))
        notification.publicKey = Data(StatusTopic.keyHash(identity.publicKey))
        notification.installationID = installationID
        notification.type = .message
        notification.author = Data(Keccak.shake256(Array(identityHex.utf8), outputCount: 64))
        var request = Protobuf_PushNotificationRequest()
        request.requests = [notification]
        request.messageID = Data((0..<32).map { _ in UInt8.random(in: 0...255) })
        let message = try Self.asymmetric(
            payload: try request.serializedBytes(), type: 20, ammSigner: ephemeral, wakuSigner: identity, to: self.serverKey,
            contentTopic: StatusTopic.contentTopic(forName: StatusTopic.partitionedName(for: self.serverKey))
        )
        try await self.relay.publish(message, pubsubTopic: self.pubsubTopic)
        guard let answer = try await self.awaitAnswer(type: 21, recipient: ephemeral),
            let response = try? Protobuf_PushNotificationResponse(serializedBytes: answer)
        else { return (false, "no push response within \(self.timeout)") }
        guard response.messageID == request.messageID, let report = response.reports.first else { return (false, "an answer for another request") }
        return report.success ? (true, "accepted for delivery") : (false, "refused: \(report.error)")
    }

    /// An AMM signed by `signer`.
    static func amm(payload: [UInt8], type: Int, signer: Secp256k1.PrivateKey) throws -> [UInt8] {
        var amm = Protobuf_ApplicationMetadataMessage()
        amm.signature = Data(signer.signRecoverable(hash32: Keccak.keccak256(payload)))
        amm.payload = Data(payload)
        amm.type = Protobuf_ApplicationMetadataMessage.TypeEnum(rawValue: type) ?? .unknown
        return try amm.serializedBytes()
    }

    private static func asymmetric(
        payload: [UInt8], type: Int, ammSigner: Secp256k1.PrivateKey, wakuSigner: Secp256k1.PrivateKey, to recipient: Secp256k1.PublicKey,
        contentTopic: String
    ) throws -> WakuMessage {
        let frame = WakuPayload.encode(data: try Self.amm(payload: payload, type: type, signer: ammSigner), signer: wakuSigner)
        return WakuMessage(payload: try ECIES.encrypt(frame, to: recipient), contentTopic: contentTopic, version: 1, timestamp: Self.nowNanoseconds())
    }

    /// Polls the recipient's partitioned topic for an answer of `type` signed by the server.
    private func awaitAnswer(type: Int, recipient: Secp256k1.PrivateKey) async throws -> [UInt8]? {
        let topic = StatusTopic.contentTopic(forName: StatusTopic.partitionedName(for: recipient.publicKey))
        let deadline = ContinuousClock.now + self.timeout
        while ContinuousClock.now < deadline {
            for message in try await self.relay.poll(pubsubTopic: self.pubsubTopic) where message.contentTopic == topic {
                guard let inbound = try? StatusEnvelopeOpener.open(message.payload, key: .asymmetric(recipient)),
                    inbound.type == type, inbound.sender == self.serverKey
                else { continue }
                return inbound.payload
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        return nil
    }

    static func nowNanoseconds() -> Int64 { StatusMessageProcessor.nowNanoseconds() }
}
