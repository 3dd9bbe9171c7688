import PushgateCore
import Testing

@Suite("Hashed bytes")
struct HashedBytesTests {
    @Test func equalBytesAreOneKeyAndOtherBytesAnother() {
        var keys = Set<HashedBytes>()
        #expect(keys.insert(HashedBytes([1, 2, 3])).inserted)
        #expect(!keys.insert(HashedBytes([1, 2, 3])).inserted)
        for other: [UInt8] in [[], [1, 2], [1, 2, 3, 0], [3, 2, 1]] {
            #expect(keys.insert(HashedBytes(other)).inserted, "\(other)")
        }
        #expect(HashedBytes([9, 9]).hashValue == HashedBytes([9, 9]).hashValue)
    }
}
