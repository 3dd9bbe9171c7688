import Foundation
import PushgateStatusWire
import PushgateTestSupport
import Testing
import PushgateCore

/// The primitives against independent implementations: libsecp256k1 through Python's coincurve, AES,
/// Keccak and SHAKE from pycryptodome, PBKDF2 from hashlib — each direction (Python makes, Swift reads, and
/// the reverse).
@Suite("Status wire: cross-checked with Python")
struct StatusWireCrossCheckTests {
    /// ECIES as go-ethereum builds it, written independently: `encrypt <recipient pub hex> <plaintext hex>`
    /// and `decrypt <secret hex> <ciphertext hex>`.
    static let eciesScript = #"""
        import sys, hashlib, hmac, os
        from coincurve import PrivateKey, PublicKey
        from Crypto.Cipher import AES
        def kdf(z):
            return hashlib.sha256((1).to_bytes(4, 'big') + z).digest()
        def keys(z):
            k = kdf(z)
            return k[:16], hashlib.sha256(k[16:32]).digest()
        def shared_x(secret, pub):
            point = PublicKey(pub).multiply(secret).format(compressed=False)
            return point[1:33]
        mode, key, data = sys.argv[1], bytes.fromhex(sys.argv[2]), bytes.fromhex(sys.argv[3])
        if mode == 'encrypt':
            eph = PrivateKey()
            ke, km = keys(shared_x(eph.secret, key))
            iv = os.urandom(16)
            c = AES.new(ke, AES.MODE_CTR, nonce=b'', initial_value=iv).encrypt(data)
            tag = hmac.new(km, iv + c, hashlib.sha256).digest()
            print((eph.public_key.format(compressed=False) + iv + c + tag).hex())
        else:
            eph, iv, c, tag = data[:65], data[65:81], data[81:-32], data[-32:]
            ke, km = keys(shared_x(key, eph))
            assert hmac.compare_digest(tag, hmac.new(km, iv + c, hashlib.sha256).digest()), 'bad tag'
            # Another library for this direction: OpenSSL's CTR through `cryptography`.
            from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
            decryptor = Cipher(algorithms.AES(ke), modes.CTR(iv)).decryptor()
            print((decryptor.update(c) + decryptor.finalize()).hex())
        """#

    @Test func eciesBothWays() async throws {
        let recipient = try Secp256k1.PrivateKey()
        let plaintext = (0..<300).map { _ in UInt8.random(in: 0...255) }
        let fromPython = try await PythonReference.run(Self.eciesScript, arguments: ["encrypt", Hex.lowercase(recipient.publicKey.uncompressed), Hex.lowercase(plaintext)])
        #expect(try ECIES.decrypt(hex(fromPython), with: recipient) == plaintext)
        let fromSwift = try ECIES.encrypt(plaintext, to: recipient.publicKey)
        let decrypted = try await PythonReference.run(Self.eciesScript, arguments: ["decrypt", Hex.lowercase(recipient.rawRepresentation), Hex.lowercase(fromSwift)])
        #expect(decrypted == Hex.lowercase(plaintext))
    }

    /// The counter is one 128-bit big-endian number: from an IV whose low 64 bits are all ones, the second
    /// block's counter carries into the high half (a 64-bit counter would wrap instead).
    @Test func eciesCounterCarriesAcrossAll128Bits() async throws {
        let recipient = try Secp256k1.PrivateKey()
        let plaintext = (0..<300).map { UInt8(truncatingIfNeeded: $0 * 31) }
        for ivText in ["0000000000000000ffffffffffffffff", "ffffffffffffffffffffffffffffffff", "00000000000000000000000000000000"] {
            let sealed = try ECIES.encrypt(plaintext, to: recipient.publicKey, iv: hex(ivText))
            let decrypted = try await PythonReference.run(Self.eciesScript, arguments: ["decrypt", Hex.lowercase(recipient.rawRepresentation), Hex.lowercase(sealed)])
            #expect(decrypted == Hex.lowercase(plaintext), "IV \(ivText)")
        }
    }

    /// go-waku's symmetric envelope written independently: `seal <key hex> <frame hex>` → ciphertext ‖ tag
    /// ‖ nonce; `open <key hex> <sealed hex>` → frame.
    static let symmetricScript = #"""
        import sys, os
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM
        mode, key, data = sys.argv[1], bytes.fromhex(sys.argv[2]), bytes.fromhex(sys.argv[3])
        if mode == 'seal':
            nonce = os.urandom(12)
            print((AESGCM(key).encrypt(nonce, data, None) + nonce).hex())
        else:
            print(AESGCM(key).decrypt(data[-12:], data[:-12], None).hex())
        """#

    @Test func symmetricEnvelopesBothWays() async throws {
        let key = StatusTopic.symmetricKey(forName: Hex.lowercase(Keccak.shake256(Array("some key".utf8))))
        let frame = WakuPayload.encode(data: Array("a query".utf8), signer: try Secp256k1.PrivateKey())
        let fromPython = try await PythonReference.run(Self.symmetricScript, arguments: ["seal", Hex.lowercase(key), Hex.lowercase(frame)])
        #expect(try WakuPayload.openSymmetric(hex(fromPython), key: key) == frame)
        let fromSwift = try WakuPayload.sealSymmetric(frame, key: key)
        let opened = try await PythonReference.run(Self.symmetricScript, arguments: ["open", Hex.lowercase(key), Hex.lowercase(fromSwift)])
        #expect(opened == Hex.lowercase(frame))
    }

    /// `sign <secret hex> <hash hex>` → R‖S‖V hex; `recover <sig hex> <hash hex>` → compressed key hex.
    static let signatureScript = #"""
        import sys
        from coincurve import PrivateKey, PublicKey
        mode, a, b = sys.argv[1], bytes.fromhex(sys.argv[2]), bytes.fromhex(sys.argv[3])
        if mode == 'sign':
            print(PrivateKey(a).sign_recoverable(b, hasher=None).hex())
        else:
            print(PublicKey.from_signature_and_message(a, b, hasher=None).format(compressed=True).hex())
        """#

    @Test func recoverableSignaturesBothWays() async throws {
        let signer = try Secp256k1.PrivateKey()
        let hash = Keccak.keccak256(Array("a message".utf8))
        let pythonSignature = try await PythonReference.run(Self.signatureScript, arguments: ["sign", Hex.lowercase(signer.rawRepresentation), Hex.lowercase(hash)])
        #expect(pythonSignature == Hex.lowercase(signer.signRecoverable(hash32: hash)), "both use RFC 6979 nonces")
        #expect(try Secp256k1.recover(signature65: hex(pythonSignature), hash32: hash) == signer.publicKey)
        let recovered = try await PythonReference.run(Self.signatureScript, arguments: ["recover", Hex.lowercase(signer.signRecoverable(hash32: hash)), Hex.lowercase(hash)])
        #expect(recovered == Hex.lowercase(signer.publicKey.compressed))
    }

    /// Keccak-256 (pycryptodome), SHAKE-256 (64 bytes; pycryptodome, checked against hashlib) and Status's
    /// PBKDF2 topic key (hashlib, empty salt) of each argument (hex).
    static let hashScript = #"""
        import sys, hashlib
        from Crypto.Hash import keccak, SHAKE256
        for arg in sys.argv[1:]:
            data = bytes.fromhex(arg)
            k = keccak.new(digest_bits=256); k.update(data)
            s = SHAKE256.new(); s.update(data)
            assert hashlib.shake_256(data).digest(64) == SHAKE256.new(data).read(64)
            p = hashlib.pbkdf2_hmac('sha256', data, b'', 65356, 32)
            print(k.hexdigest(), s.read(64).hex(), p.hex())
        """#

    @Test func keccakShakeAndTopicKeysOverEveryBlockBoundary() async throws {
        let lengths = [0, 1, 135, 136, 137, 271, 272, 300, 1000]
        let inputs = lengths.map { length in (0..<length).map { _ in UInt8.random(in: 0x20...0x7e) } }
        let lines = try await PythonReference.run(Self.hashScript, arguments: inputs.map { Hex.lowercase($0) }).split(separator: "\n")
        #expect(lines.count == inputs.count)
        for (input, line) in zip(inputs, lines) {
            let fields = line.split(separator: " ").map(String.init)
            #expect(Hex.lowercase(Keccak.keccak256(input)) == fields[0], "Keccak-256 of \(input.count) bytes")
            #expect(Hex.lowercase(Keccak.shake256(input, outputCount: 64)) == fields[1], "SHAKE-256 of \(input.count) bytes")
            #expect(Hex.lowercase(StatusTopic.symmetricKey(forName: String(decoding: input, as: UTF8.self))) == fields[2])
        }
        // Longer outputs squeeze more than one block.
        #expect(Keccak.shake256([1, 2, 3], outputCount: 300).prefix(64) == Keccak.shake256([1, 2, 3], outputCount: 64)[...])
    }
}
