@testable import PushgateStatus
import PushgateTestSupport
import Testing

/// The Status server's memory of recent message hashes: a repeat is found, the oldest is forgotten
/// first once full, and what is kept is each hash's first eight bytes.
@Suite("Recent message hashes")
struct RecentHashesTests {
    /// 32 well-mixed bytes for `index`, standing in for a message's SHA-256.
    static func hash(_ index: Int) -> [UInt8] {
        var generator = SeededGenerator(seed: UInt64(index))
        return generator.bytes(32)
    }

    /// Inserts each hash; - Returns: for each, whether it was new.
    static func insert(_ indices: Range<Int>, into recent: inout RecentHashes) -> [Bool] {
        indices.map { recent.insert(Self.hash($0)) }
    }

    @Test func aRepeatIsFoundAndTheOldestIsForgottenFirst() {
        var recent = RecentHashes(capacity: 100)
        #expect(Self.insert(0..<100, into: &recent) == Array(repeating: true, count: 100))
        #expect((0..<100).allSatisfy { recent.contains(Self.hash($0)) })
        #expect(Self.insert(0..<100, into: &recent) == Array(repeating: false, count: 100))
        #expect(Self.insert(100..<130, into: &recent) == Array(repeating: true, count: 30))
        #expect(recent.count == 100)
        #expect((0..<30).allSatisfy { !recent.contains(Self.hash($0)) }, "the 30 oldest are forgotten")
        #expect((30..<130).allSatisfy { recent.contains(Self.hash($0)) })
        // A forgotten hash is new again, and forgets the oldest kept (30).
        #expect(Self.insert(0..<1, into: &recent) == [true])
        #expect(!recent.contains(Self.hash(30)))
        #expect(recent.count == 100)
    }

    @Test func aHashIsKeptAsItsFirstEightBytes() {
        var recent = RecentHashes(capacity: 4)
        let hash = Self.hash(1)
        var sameStart = hash
        sameStart[31] ^= 0xff
        var otherStart = hash
        otherStart[7] ^= 0x01
        #expect(RecentHashes.key(hash) == hash.prefix(8).reduce(0) { $0 << 8 | UInt64($1) })
        let inserted = recent.insert(hash)
        #expect(inserted)
        #expect(recent.contains(sameStart))
        #expect(!recent.contains(otherStart))
    }
}
