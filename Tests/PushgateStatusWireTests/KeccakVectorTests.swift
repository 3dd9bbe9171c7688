import PushgateStatusWire
import Testing
import PushgateCore

/// Keccak-256 and SHAKE-256 against fixed vectors: the empty input (status-wire.md §5.2,
/// gorush-and-status.md §3.5), FIPS 202's 200 bytes of 0xA3, and inputs on each side of the 136-byte
/// block boundary (values from pycryptodome and hashlib).
@Suite("Status wire: Keccak-256 and SHAKE-256")
struct KeccakVectorTests {
    /// The input of `length` bytes `(7i + 3) mod 256`.
    static func pattern(_ length: Int) -> [UInt8] { (0..<length).map { UInt8((7 * $0 + 3) % 256) } }

    @Test(arguments: [
        (
            0, "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470",
            "46b9dd2b0ba88d13233b3feb743eeb243fcd52ea62b81b82b50c27646ed5762fd75dc4ddd8c0f200cb05019d67b592f6fc821c49479ab48640292eacb3b7c4be"
        ),
        (
            1, "69c322e3248a5dfc29d73c5b0553b0185a35cd5bb6386747517ef7e53b15e287",
            "db4252337900d8ab7f609d170135d459a6798945d5a574d4a9db7b623c754d078fb2239762994969a1f372801817bb304f5b549a6bb5cb7c69950c5f439caf19"
        ),
        (
            135, "00ef96af9cf4b24c7f269d922294444a197d0a33638c2e56634c57e892103a8f",
            "0213fc98352f009fafdf8ee1ea36391485a85aa6f6c07a5cd81266d21eb17f9af3e3a6aa4a5e03793be3a4da4ba01c438b689164fc6bebb290eb372bfecd569d"
        ),
        (
            136, "742061bcad767ed4c4f5883b1dcb1aad11afdcc140dc469d953759b127b9f9ed",
            "c00f43811e5b4a38e14e3c06d8a5ce34115a19cd604ce5bac6c3823b76046d5c6b149f173bef3089dbfe66774f9723bc344ecbaa7e9674df4ceb8558811423c5"
        ),
        (
            137, "e3371f61e770abf254c34239c3b0099ad90594507415bc81dd0a10b9692bbf2a",
            "3c983983487bcbe74feba53b35bb1e05812379cb4116d9761f78d2ce3177866edc88e750bfaf43bd31ccd052078d97406fbfca21145c09c8d9bd1e81cd443e31"
        ),
        (
            300, "fa75f2293be9f9a14dcdeeff53f7b91ff6a2b1331b13886e69077ab1cf8252a9",
            "685d9873233fd4c7ce4bb15d7b947c9841f0e5cc18847a4ef07769ccb13022be75ab878b1c49a037276714755b87c8e553c98b24721f93b444598fb0d5826391"
        ),
    ])
    func aroundTheBlockBoundary(length: Int, keccak: String, shake: String) {
        let input = Self.pattern(length)
        #expect(Hex.lowercase(Keccak.keccak256(input)) == keccak)
        #expect(Hex.lowercase(Keccak.shake256(input, outputCount: 64)) == shake)
        // Slices hash like arrays.
        let padded = [0xEE] + input + [0xEE]
        #expect(Keccak.keccak256(padded.dropFirst().dropLast()) == Keccak.keccak256(input))
        #expect(Keccak.shake256(padded.dropFirst().dropLast(), outputCount: 64) == Keccak.shake256(input))
    }

    @Test func fips202ExampleOf200BytesOfA3() {
        let input = [UInt8](repeating: 0xA3, count: 200)
        #expect(
            Hex.lowercase(Keccak.shake256(input, outputCount: 64))
                == "cd8a920ed141aa0407a22d59288652e9d9f1a7ee0c1e7c1ca699424da84a904d2d700caae7396ece96604440577da4f3aa22aeb8857f961c4cd8e06f0ae6610b"
        )
        // Keccak-256 is not NIST SHA3-256 (79f38ade… for this input): the domain byte differs.
        #expect(Hex.lowercase(Keccak.keccak256(input)) == "3a57666b048777f2c953dc4456f45a2588e1cb6f2da760122d530ac2ce607d4a")
    }

    @Test func aLongOutputSqueezesSeveralBlocks() {
        let output = Keccak.shake256(Array("abc".utf8), outputCount: 300)
        #expect(output.count == 300)
        #expect(Hex.lowercase(output) == Self.shakeOfABC300)
        #expect(Array(output.prefix(64)) == Keccak.shake256(Array("abc".utf8), outputCount: 64))
        #expect(Keccak.shake256([], outputCount: 0).isEmpty)
    }

    static let shakeOfABC300 =
        "483366601360a8771c6863080cc4114d8db44530f8f1e1ee4f94ea37e78b5739d5a15bef186a5386c75744c0527e1faa9f8726e462a12a4feb06bd8801e751e41385141204f329979fd3047a13c5657724ada64d2470157b3cdc288620944d78dbcddbd912993f0913f164fb2ce95131a2d09a3e6d51cbfc622720d7a75c6334e8a2d7ec71a7cc29cf0ea610eeff1a588290a53000faa79932becec0bd3cd0b33a7e5d397fed1ada9442b99903f4dcfd8559ed3950faf40fe6f3b5d710ed3b677513771af6bfe11934817e8762d9896ba579d88d84ba7aa3cdc7055f6796f195bd9ae788f2f5bb96100d6bbaff7fbc6eea24d4449a2477d172a5507dcc931412fc346b1bb39b878330e026b12ddf384af3334560ea1d363966caa7d8ddcbec7da52b42215c11d5f8ee57f341"
}
