import Foundation
import NIOCore
import NIOHPACK
import PushgateTestSupport
import Testing

@testable import PushgateAPNs

/// The APNs client's HPACK reader against other encoders: NIOHPACK's (the sandbox's server) and Python's
/// hpack (the HTTP/2 stack of aioapns), with Huffman coding on and off, every literal kind, evictions and
/// table size updates, and against the RFC's own examples and broken blocks.
@Suite("APNs header block decoder")
struct APNsHeaderBlockDecoderTests {
    static func bytes(_ hex: String) -> ByteBuffer {
        var buffer = ByteBuffer()
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            buffer.writeInteger(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return buffer
    }

    static func huffman(_ hex: String) throws -> String {
        let buffer = Self.bytes(hex)
        let decoded = try buffer.withUnsafeReadableBytes { try HPACKHuffmanCode.decode($0) }
        return String(decoding: decoded.bytes, as: UTF8.self)
    }

    /// RFC 7541 Appendix C.4's Huffman-coded strings.
    @Test func theRFCsHuffmanExamplesDecode() throws {
        #expect(try Self.huffman("f1e3c2e5f23a6ba0ab90f4ff") == "www.example.com")
        #expect(try Self.huffman("a8eb10649cbf") == "no-cache")
        #expect(try Self.huffman("25a849e95ba97d7f") == "custom-key")
        #expect(try Self.huffman("25a849e95bb8e8b4bf") == "custom-value")
        // C.6's answers: a status, a date and a cookie.
        #expect(try Self.huffman("6402") == "302")
        #expect(try Self.huffman("d07abe941054d444a8200595040b8166e082a62d1bff") == "Mon, 21 Oct 2013 20:13:21 GMT")
    }

    /// Every byte value round-trips through NIOHPACK's Huffman encoder, in strings of every length up to 40.
    @Test func everyByteDecodesAsNIOHPACKEncodesIt() throws {
        var encoder = HPACKEncoder(allocator: ByteBufferAllocator(), useHuffmanEncoding: true, maxDynamicTableSize: 0)
        var decoder = APNsHeaderBlockDecoder(maximumCapacity: 4096)
        for length in 0...40 {
            for first in stride(from: 0, to: 256, by: 7) {
                let value = String(decoding: (0..<length).map { UInt8((first + $0 * 31) % 256) }, as: UTF8.self)
                try encoder.beginEncoding(allocator: ByteBufferAllocator())
                try encoder.append(headers: [(name: "retry-after", value: value)])
                let block = try encoder.endEncoding()
                #expect(try decoder.decode(block).retryAfter == value)
            }
        }
    }

    /// A connection's worth of answers from NIOHPACK's encoder with a small table: the status and
    /// retry-after of each block come out as they went in, however they were indexed.
    @Test(arguments: [true, false], [256, 4096])
    func answersFromNIOHPACKAreReadInStep(huffman: Bool, tableSize: Int) throws {
        var encoder = HPACKEncoder(allocator: ByteBufferAllocator(), useHuffmanEncoding: huffman, maxDynamicTableSize: tableSize)
        var decoder = APNsHeaderBlockDecoder(maximumCapacity: 4096)
        var random = SystemRandomNumberGenerator()
        let statuses = ["200", "400", "403", "410", "429", "500", "503"]
        for round in 0..<400 {
            if round % 97 == 50 {
                // The peer lowers and raises its table size between blocks.
                try encoder.setDynamicTableSize(round % 2 == 0 ? 64 : tableSize)
            }
            let status = statuses.randomElement(using: &random)!
            var headers = HPACKHeaders()
            headers.add(name: ":status", value: status, indexing: [.indexable, .nonIndexable, .neverIndexed].randomElement(using: &random)!)
            headers.add(name: "apns-id", value: "8a7e1b4c-\(round)-4d2e-9f3a-\(UInt32.random(in: 0...UInt32.max, using: &random))")
            headers.add(name: "apns-unique-id", value: "\(round)", indexing: .nonIndexable)
            let retryAfter: String? = status == "429" || status == "503" ? String(round % 3 * 60) : nil
            if let retryAfter { headers.add(name: "retry-after", value: retryAfter) }
            if round % 5 == 0 { headers.add(name: "content-type", value: "application/json") }
            try encoder.beginEncoding(allocator: ByteBufferAllocator())
            try encoder.append(headers: headers)
            let block = try encoder.endEncoding()
            let fields = try decoder.decode(block)
            #expect(fields == .init(status: Int(status), retryAfter: retryAfter), "round \(round)")
        }
    }

    /// Python's hpack (aioapns' HTTP/2 stack) writes answers with its own choices: Huffman when shorter,
    /// its own indexing, table size updates at the start of a block.
    @Test func answersFromPythonsHPACKAreReadInStep() async throws {
        let script = #"""
            import json, random
            from hpack import Encoder
            random.seed(7)
            encoder = Encoder()
            blocks = []
            for round in range(300):
                if round in (40, 41, 150, 220):
                    encoder.header_table_size = {40: 100, 41: 300, 150: 0, 220: 4096}[round]
                status = random.choice(["200", "400", "410", "429", "503"])
                headers = [(":status", status), ("apns-id", "id-%d-%08x" % (round, random.getrandbits(32)))]
                retry = None
                if status in ("429", "503"):
                    retry = str(random.choice([0, 60, 3600]))
                    headers.append(("retry-after", retry))
                if round % 3 == 0:
                    headers.append(("x-note", "n" * random.randint(0, 90)))
                sensitive = round % 4 == 0
                block = encoder.encode(headers, huffman=round % 2 == 0) if not sensitive else \
                    encoder.encode([(n, v, n == "apns-id") for n, v in headers], huffman=True)
                blocks.append({"hex": block.hex(), "status": int(status), "retry": retry})
            print(json.dumps(blocks))
            """#
        let output = try await PythonReference.run(script)
        struct Block: Decodable {
            let hex: String
            let status: Int
            let retry: String?
        }
        let blocks = try JSONDecoder().decode([Block].self, from: Data(output.utf8))
        #expect(blocks.count == 300)
        var decoder = APNsHeaderBlockDecoder(maximumCapacity: 4096)
        for (round, block) in blocks.enumerated() {
            let fields = try decoder.decode(Self.bytes(block.hex))
            #expect(fields == .init(status: block.status, retryAfter: block.retry), "round \(round)")
        }
    }

    /// Blocks no conforming encoder writes are refused (the connection then ends with COMPRESSION_ERROR).
    @Test(arguments: [
        ("80", "index 0"),
        ("be", "an index past both tables"),
        ("3fe21f", "a table size over the announced 4,096"),
        ("88" + "20", "a table size update after a field"),
        ("7f", "an integer cut short"),
        ("7fffffffff0f", "an integer too large"),
        ("0f1d05" + "3230", "a string longer than its block"),
        ("0f1d84" + "fffffff", "Huffman: a string holding EOS"),
        ("0f1d82" + "1fff", "Huffman: 8 bits of padding"),
        ("0f1d81" + "00", "Huffman: padding that is not ones"),
    ])
    func brokenBlocksAreRefused(block: String, why: String) throws {
        var decoder = APNsHeaderBlockDecoder(maximumCapacity: 4096)
        #expect(throws: APNsHeaderBlockDecoder.Failure.self, "\(why)") {
            _ = try decoder.decode(Self.bytes(block.count % 2 == 0 ? block : block + "f"))
        }
    }

    /// An entry larger than the table empties it; a table size of zero evicts everything.
    @Test func evictionFollowsTheTableSize() throws {
        var decoder = APNsHeaderBlockDecoder(maximumCapacity: 4096)
        // :status 503 with incremental indexing, then retry-after "120" with a literal name.
        _ = try decoder.decode(Self.bytes("48" + "03" + "353033" + "40" + "0b" + "72657472792d6166746572" + "03" + "313230"))
        #expect(decoder.entryCount == 2)
        // Index 62 is the newest (retry-after), 63 the older (:status 503).
        #expect(try decoder.decode(Self.bytes("bfbe")) == .init(status: 503, retryAfter: "120"))
        _ = try decoder.decode(Self.bytes("20"))
        #expect(decoder.entryCount == 0)
        #expect(throws: APNsHeaderBlockDecoder.Failure.self) { _ = try decoder.decode(Self.bytes("be")) }
    }
}
