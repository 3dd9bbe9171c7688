import Foundation
import PushgateStatusWire
import SwiftProtobuf
import Testing
import PushgateCore

func hex(_ text: String) -> [UInt8] { Hex.decode(text)! }
func key(_ byte: UInt8) throws -> Secp256k1.PrivateKey { try Secp256k1.PrivateKey(bytes: Array(repeating: byte, count: 32)) }

/// Every primitive against the published vectors (status-wire.md §5): go-ethereum's ECIES, KDF and
/// recovery vectors, status-go's topic vectors, nwaku's message hashes, and the end-to-end registration
/// and query constructions of §5.4.
@Suite("Status wire: published vectors")
struct StatusWireVectorTests {
    @Test func keccakAndShakeOfNothing() {
        #expect(Hex.lowercase(Keccak.keccak256([])) == "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470")
        #expect(
            Hex.lowercase(Keccak.shake256([], outputCount: 64))
                == "46b9dd2b0ba88d13233b3feb743eeb243fcd52ea62b81b82b50c27646ed5762fd75dc4ddd8c0f200cb05019d67b592f6fc821c49479ab48640292eacb3b7c4be"
        )
    }

    @Test func partitionedTopicsOfStatusGosTests() throws {
        let first = try Secp256k1.PrivateKey(bytes: hex("c6cbd7d76bc5baca530c875663711b947efa6a86a900a9e8645ce32e5821484e"))
        let second = try Secp256k1.PrivateKey(bytes: hex("d51dd64ad19ea84968a308dca246012c00d2b2101d41bce740acd1c650acc509"))
        #expect(StatusTopic.partitionedName(for: first.publicKey) == "contact-discovery-4490")
        #expect(StatusTopic.partitionedName(for: second.publicKey) == "contact-discovery-3991")
    }

    @Test func concatKDF() {
        let expected = StatusVectors.kdf64
        for length in [6, 32, 48, 64] {
            #expect(Hex.lowercase(ECIES.concatKDF(Array("input".utf8), count: length)) == String(expected.prefix(length * 2)))
        }
    }

    @Test func sharedSecretIsTheRawXBothWays() throws {
        let a = try Secp256k1.PrivateKey(bytes: hex(StatusVectors.sharedA))
        let b = try Secp256k1.PrivateKey(bytes: hex(StatusVectors.sharedB))
        #expect(Hex.lowercase(a.sharedSecretX(with: b.publicKey)) == StatusVectors.sharedAB)
        #expect(Hex.lowercase(b.sharedSecretX(with: a.publicKey)) == StatusVectors.sharedAB)
        let one = try Secp256k1.PrivateKey(bytes: hex(StatusVectors.padKey1))
        let two = try Secp256k1.PrivateKey(bytes: hex(StatusVectors.padKey2))
        #expect(Hex.lowercase(one.publicKey.x) == StatusVectors.padX1)
        #expect(Hex.lowercase(Array(one.publicKey.uncompressed[33...])) == StatusVectors.padY1)
        #expect(Hex.lowercase(two.publicKey.x) == StatusVectors.padX2)
        #expect(Hex.lowercase(Array(two.publicKey.uncompressed[33...])) == StatusVectors.padY2)
        #expect(one.sharedSecretX(with: two.publicKey) == two.sharedSecretX(with: one.publicKey))
        #expect(one.sharedSecretX(with: two.publicKey).count == 32)
    }

    @Test func recoveryOfGoEthereumsSignature() throws {
        let recovered = try Secp256k1.recover(signature65: hex(StatusVectors.recSig), hash32: hex(StatusVectors.recHash))
        #expect(Hex.lowercase(recovered.uncompressed) == StatusVectors.recKey)
        #expect(Hex.lowercase(recovered.compressed) == StatusVectors.recKeyCompressed)
        var signature = hex(StatusVectors.recSig)
        signature[64] = 28
        #expect(throws: (any Error).self) { try Secp256k1.recover(signature65: signature, hash32: hex(StatusVectors.recHash)) }
    }

    @Test func eciesCiphertextsOfTheRLPxHandshake() throws {
        let a = try Secp256k1.PrivateKey(bytes: hex(StatusVectors.keyA))
        let b = try Secp256k1.PrivateKey(bytes: hex(StatusVectors.keyB))
        let ephemeralA = try Secp256k1.PrivateKey(bytes: hex(StatusVectors.ephA))
        let ephemeralB = try Secp256k1.PrivateKey(bytes: hex(StatusVectors.ephB))
        let auth = try ECIES.decrypt(hex(StatusVectors.auth1), with: b)
        #expect(auth.count == 194)
        let expectedAuth = hex(StatusVectors.authSig) + Keccak.keccak256(Array(ephemeralA.publicKey.uncompressed.dropFirst()))
            + Array(a.publicKey.uncompressed.dropFirst()) + hex(StatusVectors.nonceA) + [0]
        #expect(auth == expectedAuth)
        let ack = try ECIES.decrypt(hex(StatusVectors.ack1), with: a)
        #expect(ack == Array(ephemeralB.publicKey.uncompressed.dropFirst()) + hex(StatusVectors.nonceB) + [0])
        var tampered = hex(StatusVectors.ack1)
        tampered[100] ^= 1
        #expect(throws: ECIES.Failure.authenticationFailed) { try ECIES.decrypt(tampered, with: a) }
        #expect(throws: (any Error).self) { try ECIES.decrypt(hex(StatusVectors.ack1), with: b) }
    }

    @Test(arguments: [
        ("", "cccab07fed94181c83937c8ca8340c9108492b7ede354a6d95421ad34141fd37", true),
        ("73757065722d736563726574", "b9b4852f9d8c489846e8bfc6c5ca6a1a8d460a40d28832a966e029eb39619199", true),
        (String((0..<64).map { String(format: "%02x", $0) }.joined()), "653460d04f66c5b11814d235152f4f246e6f03ef80a305a825913636fbafd0ba", true),
        ("73757065722d736563726574", "0f6448cc23b2db6c696aa6ab4b693eff4cf3549ff346fe1dbeb281697396a09f", false),
    ])
    func wakuMessageHashes(meta: String, expected: String, withPayload: Bool) {
        let hash = WakuMessageHash.compute(
            pubsubTopic: "/waku/2/rs/0/0", payload: withPayload ? hex("010203045445535405060708") : [], contentTopic: "/waku/2/default-content/proto",
            meta: hex(meta), timestampNanoseconds: 0x1757_89bf_a23f_8400
        )
        #expect(Hex.lowercase(hash) == expected)
    }

    @Test func topicBytesOfStatusGosTests() {
        // The 4-byte topic is the first bytes of Keccak-256; content topics carry them as 0x + 8 hex digits.
        #expect(StatusTopic.contentTopic(forName: "contact-discovery-343") == "/waku/1/0xdba691a3/rfc26")
    }
}

/// The §5.4 constructions: a status-go client registering and querying with fixed keys.
@Suite("Status wire: derived registration and query vectors")
struct StatusWireDerivedVectorTests {
    let client: Secp256k1.PrivateKey
    let server: Secp256k1.PrivateKey
    let ephemeral: Secp256k1.PrivateKey

    init() throws {
        self.client = try key(0x11)
        self.server = try key(0x22)
        self.ephemeral = try key(0x33)
    }

    @Test func keysHashesAndTheSharedSecret() {
        #expect(Hex.lowercase(self.client.publicKey.uncompressed) == StatusVectors.client65)
        #expect(Hex.lowercase(self.client.publicKey.compressed) == StatusVectors.client33)
        #expect(Hex.lowercase(self.server.publicKey.uncompressed) == StatusVectors.server65)
        #expect(Hex.lowercase(self.server.publicKey.compressed) == StatusVectors.server33)
        #expect(Hex.lowercase(StatusTopic.keyHash(self.client.publicKey)) == StatusVectors.shakeClient)
        #expect(Hex.lowercase(self.client.sharedSecretX(with: self.server.publicKey)) == StatusVectors.shared)
        #expect(Hex.lowercase(self.server.sharedSecretX(with: self.client.publicKey)) == StatusVectors.shared)
        let author = Keccak.shake256(Array(("0x" + Hex.lowercase(self.client.publicKey.uncompressed)).utf8), outputCount: 64)
        #expect(Hex.lowercase(author) == StatusVectors.authorHash)
    }

    @Test func theGrantIsDeterministicAndVerifies() {
        let token = "b6ae4fde-bb65-11ea-b3de-0242ac130004"
        let material = StatusGrant.material(clientKey: self.client.publicKey, serverKey: self.server.publicKey, accessToken: token)
        #expect(Hex.lowercase(material) == StatusVectors.material)
        let grant = self.client.signRecoverable(hash32: material)
        #expect(Hex.lowercase(grant) == StatusVectors.grant)
        #expect(StatusGrant.verify(grant: grant, clientKey: self.client.publicKey, serverKey: self.server.publicKey, accessToken: token))
        #expect(!StatusGrant.verify(grant: grant, clientKey: self.client.publicKey, serverKey: self.server.publicKey, accessToken: token + "x"))
        #expect(!StatusGrant.verify(grant: grant, clientKey: self.server.publicKey, serverKey: self.client.publicKey, accessToken: token))
    }

    @Test func theRegistrationFromProtobufToWakuPayload() throws {
        var registration = Protobuf_PushNotificationRegistration()
        registration.tokenType = .apnToken
        registration.deviceToken = String(repeating: "abcd", count: 16)
        registration.installationID = "c6ae4fde-bb65-11ea-b3de-0242ac130004"
        registration.accessToken = "b6ae4fde-bb65-11ea-b3de-0242ac130004"
        registration.enabled = true
        registration.version = 1
        registration.apnTopic = "im.status.ethereum"
        registration.grant = Data(hex(StatusVectors.grant))
        let marshalled: [UInt8] = try registration.serializedBytes()
        #expect(Hex.lowercase(marshalled) == StatusVectors.registration, "SwiftProtobuf marshals as Go does")

        let sharedKey = self.client.sharedSecretX(with: self.server.publicKey)
        let encrypted = try RegistrationCipher.seal(marshalled, key: sharedKey, nonce: Array(0..<12))
        #expect(Hex.lowercase(encrypted) == StatusVectors.encrypted)
        #expect(try RegistrationCipher.open(encrypted, key: sharedKey) == marshalled)
        #expect(Hex.lowercase(Keccak.shake256(encrypted, outputCount: 64)) == StatusVectors.requestID)

        var amm = Protobuf_ApplicationMetadataMessage()
        amm.signature = Data(self.client.signRecoverable(hash32: Keccak.keccak256(encrypted)))
        amm.payload = Data(encrypted)
        amm.type = .pushNotificationRegistration
        let ammBytes: [UInt8] = try amm.serializedBytes()
        #expect(Hex.lowercase(ammBytes) == StatusVectors.ammPrefix + StatusVectors.encrypted + StatusVectors.ammSuffix)
        #expect(Hex.lowercase(StatusMessageID.compute(author: self.client.publicKey, data: ammBytes)) == StatusVectors.messageID)

        let frame = WakuPayload.encode(data: ammBytes, signer: self.client, padding: Array(repeating: 0, count: 7))
        #expect(Hex.lowercase(frame) == StatusVectors.framePrefix + Hex.lowercase(ammBytes) + StatusVectors.framePadding + StatusVectors.frameSignature)
        let decoded = try WakuPayload.decode(frame)
        #expect(decoded.data == ammBytes && decoded.signer == self.client.publicKey)

        let payload = try ECIES.encrypt(frame, to: self.server.publicKey, ephemeralKey: try key(0x44), iv: Array(repeating: 0, count: 16))
        #expect(Hex.lowercase(payload) == StatusVectors.wakuPayload)
        #expect(try ECIES.decrypt(payload, with: self.server) == frame)
    }

    @Test func contentTopicsOfTheServerTheClientAndTheEphemeralKey() {
        #expect(StatusTopic.contentTopic(forName: StatusTopic.personalName(for: self.server.publicKey)) == "/waku/1/0x4cb25b77/rfc26")
        #expect(StatusTopic.partitionedName(for: self.server.publicKey) == "contact-discovery-343")
        #expect(StatusTopic.contentTopic(forName: StatusTopic.partitionedName(for: self.server.publicKey)) == "/waku/1/0xdba691a3/rfc26")
        #expect(StatusTopic.contentTopic(forName: StatusTopic.partitionedName(for: self.client.publicKey)) == "/waku/1/0xf607cdc6/rfc26")
        #expect(StatusTopic.contentTopic(forName: StatusTopic.partitionedName(for: self.ephemeral.publicKey)) == "/waku/1/0x0e576178/rfc26")
        let queryName = StatusTopic.queryName(forKeyHash: StatusTopic.keyHash(self.client.publicKey))
        #expect(queryName == StatusVectors.shakeClient)
        #expect(StatusTopic.contentTopic(forName: queryName) == "/waku/1/0x7adbefd6/rfc26")
        #expect(Hex.lowercase(StatusTopic.symmetricKey(forName: queryName)) == StatusVectors.querySymKey)
    }

    @Test func theQueryAMMAndItsMessageID() throws {
        var query = Protobuf_PushNotificationQuery()
        query.publicKeys = [Data(StatusTopic.keyHash(self.client.publicKey))]
        let payload: [UInt8] = try query.serializedBytes()
        var amm = Protobuf_ApplicationMetadataMessage()
        amm.signature = Data(self.ephemeral.signRecoverable(hash32: Keccak.keccak256(payload)))
        amm.payload = Data(payload)
        amm.type = .pushNotificationQuery
        let ammBytes: [UInt8] = try amm.serializedBytes()
        #expect(Hex.lowercase(ammBytes) == StatusVectors.queryAMMPrefix + StatusVectors.shakeClient + StatusVectors.queryAMMSuffix)
        #expect(Hex.lowercase(StatusMessageID.compute(author: self.ephemeral.publicKey, data: ammBytes)) == StatusVectors.queryMessageID)
        // Sealed with the topic key (nonce at the end) and opened again.
        let key = StatusTopic.symmetricKey(forName: StatusTopic.queryName(forKeyHash: StatusTopic.keyHash(self.client.publicKey)))
        let frame = WakuPayload.encode(data: ammBytes, signer: self.client)
        let sealed = try WakuPayload.sealSymmetric(frame, key: key, nonce: Array(0..<12))
        #expect(Array(sealed.suffix(12)) == Array(0..<12))
        #expect(try WakuPayload.openSymmetric(sealed, key: key) == frame)
        #expect(frame.count % 256 == 0)
        #expect(throws: (any Error).self) { try WakuPayload.sealSymmetric(frame, key: Array(repeating: 0, count: 32)) }
    }
}
