@testable import PushgateStatusWire
import Testing
import PushgateCore

/// The rules around the vectors: what each decoder refuses (go-ethereum's and go-waku's rules), the
/// padding arithmetic, topic bytes (status-wire.md §5.1), key validation, and that secrets stay out of
/// descriptions.
@Suite("Status wire: rules and rejections")
struct StatusWireRuleTests {
    // MARK: Topics (§5.1)

    @Test(arguments: [
        ("00000000", "/waku/1/0x00000000/rfc26"), ("007f80ff", "/waku/1/0x007f80ff/rfc26"), ("ff807f00", "/waku/1/0xff807f00/rfc26"),
        ("f26e7779", "/waku/1/0xf26e7779/rfc26"), ("ea1d43", "/waku/1/0xea1d4300/rfc26"), ("6f3cb0dd0f0090", "/waku/1/0x6f3cb0dd/rfc26"),
    ])
    func topicBytesOfStatusGosTopicTests(bytes: String, contentTopic: String) {
        #expect(StatusTopic.contentTopic(forTopic: hex(bytes)) == contentTopic)
        #expect(StatusTopic.topic(fromContentTopic: contentTopic) == Array((hex(bytes) + [0, 0, 0, 0]).prefix(4)))
    }

    @Test func contentTopicsAreParsedOnlyInStatusGosShape() {
        #expect(StatusTopic.topic(fromContentTopic: "/waku/1/0x12345679/rfc26") == [0x12, 0x34, 0x56, 0x79])
        #expect(StatusTopic.topic(fromContentTopic: "/waku/1/0X12345679/rfc26") == [0x12, 0x34, 0x56, 0x79])
        for invalid in [
            "/waku/2/0x12345679/rfc26", "/waku/1/12345679/rfc26", "waku/1/0x12345679/rfc26", "/waku/1/0x123/rfc26", "/waku/1/0x12345679/rfc26/",
            "/waku/1/0x12345679/proto", "/waku/1/0xzz345679/rfc26", "",
        ] {
            #expect(StatusTopic.topic(fromContentTopic: invalid) == nil, "\(invalid)")
        }
        #expect(StatusTopic.topicBytes(forName: "contact-discovery-343") == [0xdb, 0xa6, 0x91, 0xa3])
    }

    // MARK: The payload frame (§2.3)

    @Test func aSignedFrameOf246DataBytesIsPaddedTo447BeforeItsSignature() throws {
        let signer = try key(0x11)
        let frame = WakuPayload.encode(data: Array(repeating: 0x5a, count: 246), signer: signer)
        #expect(frame.count == 512)
        #expect(frame.count - 65 == 447)
        #expect(frame[0] == 0x05 && frame[1] == 246)
        let decoded = try WakuPayload.decode(frame)
        #expect(decoded.data == Array(repeating: 0x5a, count: 246) && decoded.signer == signer.publicKey)
    }

    @Test(arguments: [(0, 256), (1, 256), (253, 256), (254, 512), (255, 512), (256, 512), (1000, 1024)])
    func unsignedFramesAreRoundedUpTo256WithAtLeastOneByteOfPadding(dataCount: Int, frameCount: Int) throws {
        let data = (0..<dataCount).map { UInt8(truncatingIfNeeded: $0) }
        let frame = WakuPayload.encode(data: data, signer: nil)
        #expect(frame.count == frameCount)
        #expect(frame[0] == (dataCount < 256 ? 1 : 2), "the size field has the fewest bytes")
        let decoded = try WakuPayload.decode(frame)
        #expect(decoded.data == data && decoded.signer == nil)
    }

    @Test func theSizeFieldIsLittleEndian() throws {
        let frame = WakuPayload.encode(data: Array(repeating: 1, count: 0x0123), signer: try key(0x11))
        #expect(Array(frame[0..<3]) == [0x06, 0x23, 0x01])
        #expect(frame.count % 256 == 0)
    }

    @Test func framesThatDoNotParseAreRefused() throws {
        let signer = try key(0x11)
        #expect(throws: WakuPayload.Failure.malformed) { try WakuPayload.decode([]) }
        // Size larger than the room before the end.
        #expect(throws: WakuPayload.Failure.malformed) { try WakuPayload.decode([0x01, 5, 1, 2, 3]) }
        // A 2-byte size field that is cut off.
        #expect(throws: WakuPayload.Failure.malformed) { try WakuPayload.decode([0x02, 5]) }
        // Signed: at least 2 bytes must precede the 65-byte signature.
        let tiny = [UInt8(0x04)] + signer.signRecoverable(hash32: Keccak.keccak256([0x04]))
        #expect(throws: WakuPayload.Failure.malformed) { try WakuPayload.decode(tiny) }
        // A signature whose V is 27 (the 26/WAKU2-PAYLOAD text's value) does not recover.
        var frame = WakuPayload.encode(data: [1, 2, 3], signer: signer)
        frame[frame.count - 1] = 27
        #expect(throws: WakuPayload.Failure.badSignature) { try WakuPayload.decode(frame) }
        // Data cannot run into the signature.
        let unsignedSize = [UInt8(0x05), 200] + Array(repeating: 0, count: 100)
        let sized = unsignedSize + signer.signRecoverable(hash32: Keccak.keccak256(unsignedSize))
        #expect(throws: WakuPayload.Failure.malformed) { try WakuPayload.decode(sized) }
    }

    @Test func aFrameWithoutSizeFieldHasNoDataAndOtherFlagBitsAreIgnored() throws {
        #expect(try WakuPayload.decode([0x00, 9, 9, 9]).data.isEmpty)
        var frame = WakuPayload.encode(data: [7, 8, 9], signer: nil)
        frame[0] |= 0xF0
        #expect(try WakuPayload.decode(frame).data == [7, 8, 9])
    }

    @Test func alteringASignedFrameChangesOrLosesItsSigner() throws {
        let signer = try key(0x11)
        var frame = WakuPayload.encode(data: Array("hello".utf8), signer: signer)
        frame[3] ^= 1
        let decoded = try? WakuPayload.decode(frame)
        #expect(decoded?.signer != signer.publicKey)
    }

    @Test func fixedPaddingReplacesTheRuleButEmptyPaddingDoesNot() {
        #expect(WakuPayload.encode(data: [1], signer: nil, padding: [0, 0]) == [1, 1, 1, 0, 0])
        #expect(WakuPayload.encode(data: [1], signer: nil, padding: []).count == 256)
    }

    // MARK: Envelopes

    @Test func asymmetricEnvelopesRoundTrip() throws {
        let server = try key(0x22)
        let frame = WakuPayload.encode(data: Array("registration".utf8), signer: try key(0x11))
        let sealed = try WakuPayload.sealAsymmetric(frame, to: server.publicKey)
        #expect(sealed.count == frame.count + ECIES.overhead)
        #expect(try WakuPayload.openAsymmetric(sealed, with: server) == frame)
        #expect(throws: ECIES.Failure.authenticationFailed) { try WakuPayload.openAsymmetric(sealed, with: try key(0x33)) }
    }

    @Test func symmetricEnvelopesCheckTheirKeyAndTag() throws {
        let key = StatusTopic.symmetricKey(forName: "a topic")
        let sealed = try WakuPayload.sealSymmetric([1, 2, 3], key: key)
        #expect(sealed.count == 3 + 16 + 12)
        #expect(try WakuPayload.openSymmetric(sealed, key: key) == [1, 2, 3])
        #expect(throws: WakuPayload.Failure.authenticationFailed) { try WakuPayload.openSymmetric(sealed, key: StatusTopic.symmetricKey(forName: "another")) }
        var altered = sealed
        altered[0] ^= 1
        #expect(throws: WakuPayload.Failure.authenticationFailed) { try WakuPayload.openSymmetric(altered, key: key) }
        #expect(throws: WakuPayload.Failure.malformed) { try WakuPayload.openSymmetric(Array(sealed.prefix(27)), key: key) }
        #expect(throws: WakuPayload.Failure.badKey) { try WakuPayload.openSymmetric(sealed, key: Array(key.prefix(31))) }
        #expect(throws: WakuPayload.Failure.badKey) { try WakuPayload.sealSymmetric([1], key: Array(repeating: 0, count: 32)) }
        // Random nonces: sealing twice differs.
        #expect(try WakuPayload.sealSymmetric([1, 2, 3], key: key) != sealed)
    }

    @Test func registrationBlobsCheckTheirKeyAndTag() throws {
        let key = try key(0x11).sharedSecretX(with: try key(0x22).publicKey)
        let sealed = try RegistrationCipher.seal([4, 5, 6], key: key)
        #expect(sealed.count == 12 + 3 + 16)
        #expect(try RegistrationCipher.open(sealed, key: key) == [4, 5, 6])
        #expect(throws: RegistrationCipher.Failure.authenticationFailed) { try RegistrationCipher.open(sealed, key: Array(repeating: 9, count: 32)) }
        #expect(throws: RegistrationCipher.Failure.malformed) { try RegistrationCipher.open(Array(sealed.prefix(27)), key: key) }
        #expect(throws: RegistrationCipher.Failure.badKey) { try RegistrationCipher.open(sealed, key: Array(key.prefix(16))) }
        #expect(throws: RegistrationCipher.Failure.badKey) { try RegistrationCipher.seal([1], key: Array(key.prefix(16))) }
    }

    // MARK: ECIES (§2.5)

    @Test func eciesRefusesWhatGoEthereumRefuses() throws {
        let recipient = try key(0x22)
        let valid = try ECIES.encrypt([1, 2, 3], to: recipient.publicKey)
        #expect(throws: ECIES.Failure.malformed) { try ECIES.decrypt([], with: recipient) }
        var badPrefix = valid
        badPrefix[0] = 5
        #expect(throws: ECIES.Failure.malformed) { try ECIES.decrypt(badPrefix, with: recipient) }
        // 2 and 3 pass the first check but are not an uncompressed point.
        var compressedPrefix = valid
        compressedPrefix[0] = 2
        #expect(throws: ECIES.Failure.malformed) { try ECIES.decrypt(compressedPrefix, with: recipient) }
        // Not on the curve.
        var offCurve = valid
        offCurve[64] ^= 1
        #expect(throws: ECIES.Failure.malformed) { try ECIES.decrypt(offCurve, with: recipient) }
        // Shorter than 65 + 32 + 1.
        #expect(throws: ECIES.Failure.malformed) { try ECIES.decrypt(Array(valid.prefix(97)), with: recipient) }
        // Long enough, but the tag does not match.
        #expect(throws: ECIES.Failure.authenticationFailed) { try ECIES.decrypt(Array(valid.prefix(98)), with: recipient) }
        var alteredTag = valid
        alteredTag[alteredTag.count - 1] ^= 1
        #expect(throws: ECIES.Failure.authenticationFailed) { try ECIES.decrypt(alteredTag, with: recipient) }
        var alteredIV = valid
        alteredIV[70] ^= 1
        #expect(throws: ECIES.Failure.authenticationFailed) { try ECIES.decrypt(alteredIV, with: recipient) }
        #expect(throws: ECIES.Failure.malformed) { try ECIES.encrypt([1], to: recipient.publicKey, iv: [0, 0]) }
    }

    @Test func eciesCarriesAnEmptyPlaintextAndFreshEphemeralKeys() throws {
        let recipient = try key(0x22)
        let empty = try ECIES.encrypt([], to: recipient.publicKey)
        #expect(empty.count == ECIES.overhead)
        #expect(try ECIES.decrypt(empty, with: recipient).isEmpty)
        let first = try ECIES.encrypt([1, 2, 3], to: recipient.publicKey)
        let second = try ECIES.encrypt([1, 2, 3], to: recipient.publicKey)
        #expect(first.prefix(65) != second.prefix(65))
        #expect(first[0] == 4)
    }

    // MARK: Keys and signatures

    @Test func privateKeysAreValidatedAndNeverDescribed() throws {
        #expect(throws: Secp256k1.Failure.invalidPrivateKey) { try Secp256k1.PrivateKey(bytes: Array(repeating: 0, count: 32)) }
        #expect(throws: Secp256k1.Failure.invalidPrivateKey) { try Secp256k1.PrivateKey(bytes: Array(repeating: 1, count: 31)) }
        let order = hex("fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141")
        #expect(throws: Secp256k1.Failure.invalidPrivateKey) { try Secp256k1.PrivateKey(bytes: order) }
        var belowOrder = order
        belowOrder[31] -= 1
        #expect(throws: Never.self) { try Secp256k1.PrivateKey(bytes: belowOrder) }

        let secret = try key(0x11)
        let secretHex = Hex.lowercase(secret.rawRepresentation)
        for text in [String(describing: secret), String(reflecting: secret), "\(secret)", secret.debugDescription] {
            #expect(!text.contains(secretHex) && !text.lowercased().contains("1111111111"))
            #expect(text.contains(Hex.lowercase(secret.publicKey.compressed)))
        }
        let random = try Secp256k1.PrivateKey()
        let another = try Secp256k1.PrivateKey()
        #expect(random.rawRepresentation.count == 32 && random.rawRepresentation != another.rawRepresentation)
    }

    @Test func publicKeysParseBothFormsAndCompareByPoint() throws {
        let key = try key(0x11).publicKey
        let fromCompressed = try Secp256k1.PublicKey(bytes: key.compressed)
        let fromUncompressed = try Secp256k1.PublicKey(bytes: key.uncompressed)
        #expect(fromCompressed == key && fromUncompressed == key)
        #expect(fromCompressed.uncompressed == key.uncompressed && fromCompressed.x == Array(key.compressed.dropFirst()))
        #expect(Set([fromCompressed, fromUncompressed, key]).count == 1)
        #expect(throws: Secp256k1.Failure.invalidPublicKey) { try Secp256k1.PublicKey(bytes: Array(key.uncompressed.dropFirst())) }
        var hybrid = key.uncompressed
        hybrid[0] = 6 | (key.uncompressed[64] & 1)
        #expect(throws: Secp256k1.Failure.invalidPublicKey) { try Secp256k1.PublicKey(bytes: hybrid) }
        var offCurve = key.uncompressed
        offCurve[64] ^= 1
        #expect(throws: Secp256k1.Failure.invalidPublicKey) { try Secp256k1.PublicKey(bytes: offCurve) }
        #expect(throws: Secp256k1.Failure.invalidPublicKey) { try Secp256k1.PublicKey(bytes: [0x02] + Array(repeating: 0xff, count: 32)) }
    }

    @Test func recoverableSignaturesRoundTripAndRefuseBadInput() throws {
        let signer = try key(0x33)
        let hash = Keccak.keccak256(Array("something".utf8))
        let signature = signer.signRecoverable(hash32: hash)
        #expect(signature.count == 65 && signature[64] <= 1)
        #expect(signer.signRecoverable(hash32: hash) == signature, "RFC 6979: deterministic")
        #expect(try Secp256k1.recover(signature65: signature, hash32: hash) == signer.publicKey)
        #expect(try Secp256k1.recover(signature65: signature, hash32: Keccak.keccak256([1])) != signer.publicKey)
        var badV = signature
        badV[64] = 4
        #expect(throws: Secp256k1.Failure.invalidSignature) { try Secp256k1.recover(signature65: badV, hash32: hash) }
        #expect(throws: Secp256k1.Failure.invalidSignature) { try Secp256k1.recover(signature65: Array(signature.prefix(64)), hash32: hash) }
        #expect(throws: Secp256k1.Failure.invalidHash) { try Secp256k1.recover(signature65: signature, hash32: Array(hash.prefix(31))) }
        let zeroR = [UInt8](repeating: 0, count: 32) + signature[32..<65]
        #expect(throws: Secp256k1.Failure.invalidSignature) { try Secp256k1.recover(signature65: zeroR, hash32: hash) }
        #expect(signer.signRecoverable(hash32: Array(hash.prefix(31))).isEmpty)
    }

    @Test func theLibraryIsAvailableHereAndTheAdviceNamesThePackage() throws {
        #expect(Secp256k1.isAvailable)
        #expect(throws: Never.self) { try Secp256k1.availability.get() }
        let advice = Secp256k1.Unavailable(missing: "the ECDH module").description
        #expect(
            advice.hasPrefix(
                "libsecp256k1 with its ECDH and recovery modules is needed for Status: install Debian's libsecp256k1-1 (apt-get install libsecp256k1-1)"
            )
        )
        #expect(advice.contains("the ECDH module"))
    }

    // MARK: Ids and hashes

    @Test func aMessageIDWithoutAuthorIsTheKeccakOfTheData() throws {
        #expect(StatusMessageID.compute(author: nil, data: [1, 2, 3]) == Keccak.keccak256([1, 2, 3]))
        let author = try key(0x11).publicKey
        #expect(StatusMessageID.compute(author: author, data: [1, 2, 3]) == Keccak.keccak256(author.uncompressed + [1, 2, 3]))
    }

    @Test func theHMACBasedPBKDF2MatchesRFC7914AndTheLibrary() {
        // RFC 7914 §11: PBKDF2-HMAC-SHA256("passwd", "salt", 1, 64).
        #expect(
            Hex.lowercase(StatusTopic.pbkdf2SHA256(password: Array("passwd".utf8), salt: Array("salt".utf8), rounds: 1, count: 64))
                == "55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc49ca9cccf179b645991664b39d77ef317c71b845b1e30bd509112041d3a19783"
        )
        #expect(
            StatusTopic.pbkdf2SHA256(password: Array("name".utf8), salt: [], rounds: StatusTopic.symmetricKeyRounds, count: 32)
                == StatusTopic.symmetricKey(forName: "name")
        )
    }
}
