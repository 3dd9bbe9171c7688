import Foundation
import PushgateCore
import Synchronization
import Testing

@Suite("Secure random pool")
struct SecureRandomPoolTests {
    @Test func uuidsAreVersionFourAndNeverRepeatAcrossRefillsAndThreads() async throws {
        let pool = SecureRandomPool()
        // 8 tasks × 5,000 identifiers: 640,000 bytes, about 156 refills of the pool, drawn concurrently.
        let all = await withTaskGroup(of: [UUID].self) { group in
            for _ in 0..<8 { group.addTask { (0..<5_000).map { _ in pool.uuid() } } }
            var all: [UUID] = []
            for await some in group { all += some }
            return all
        }
        #expect(all.count == 40_000)
        #expect(Set(all).count == 40_000)
        for uuid in all.prefix(1_000) {
            let text = uuid.uuidString
            // xxxxxxxx-xxxx-4xxx-[89AB]xxx-xxxxxxxxxxxx
            #expect(Array(text)[14] == "4", "\(text)")
            #expect("89AB".contains(Array(text)[19]), "\(text)")
        }
    }

    @Test func fillsOfAnySizeGetFreshBytesThatLookUniform() {
        let pool = SecureRandomPool()
        // Sizes that end inside the pool, on its end and across several refills.
        var seen = Set<[UInt8]>()
        var counts = [Int](repeating: 0, count: 256)
        var total = 0
        for size in [1, 7, 8, 16, 100, 4_000, 4_096, 4_097, 10_000, 100_000, 400_000] {
            var bytes = [UInt8](repeating: 0, count: size)
            bytes.withUnsafeMutableBytes { pool.fill($0) }
            if size >= 16 {
                // No 16-byte window is handed out twice.
                for start in stride(from: 0, to: size - 15, by: 16) { #expect(seen.insert(Array(bytes[start..<start + 16])).inserted) }
            }
            for byte in bytes { counts[Int(byte)] += 1 }
            total += size
        }
        // Each of the 256 values about total / 256 = 2,037 times; a byte stuck at zero (an unfilled buffer)
        // or a repeated block shows far outside these bounds.
        let expected = Double(total) / 256
        for (value, count) in counts.enumerated() {
            #expect(abs(Double(count) - expected) < 8 * expected.squareRoot(), "byte \(value): \(count) times, about \(expected) expected")
        }
        var generator = pool.generator
        let words = (0..<1_000).map { _ in generator.next() }
        #expect(Set(words).count == 1_000)
        #expect(pool.bytes(0).isEmpty)
        let keys = (0..<1_000).map { _ in pool.bytes(32) }
        #expect(keys.allSatisfy { $0.count == 32 })
        #expect(Set(keys).count == 1_000)
    }
}
