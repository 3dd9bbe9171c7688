/// A bounded set of recent 14/WAKU2 message hashes, the oldest forgotten first.
///
/// Each hash is kept as its first eight bytes: SHA-256 output is uniform, so two different messages share
/// them with a chance of about 2^-64 per pair, and four times as many hashes fit in the memory the whole
/// 32 bytes would take (a set entry and a place in the order, 8 bytes each instead of 32).
struct RecentHashes: Sendable {
    private var set: Set<UInt64> = []
    private var order: [UInt64] = []
    private var next = 0
    /// The most hashes kept.
    let capacity: Int

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// How many hashes are kept.
    var count: Int { self.set.count }

    /// Whether the hash is there.
    func contains(_ hash: [UInt8]) -> Bool { self.set.contains(Self.key(hash)) }

    /// Adds a hash. - Returns: false when it was already there.
    mutating func insert(_ hash: [UInt8]) -> Bool {
        let key = Self.key(hash)
        guard self.set.insert(key).inserted else { return false }
        if self.order.count < self.capacity {
            self.order.append(key)
        } else {
            self.set.remove(self.order[self.next])
            self.order[self.next] = key
            self.next = (self.next + 1) % self.capacity
        }
        return true
    }

    /// The first eight bytes of `hash`, big-endian (fewer when it is shorter).
    static func key(_ hash: [UInt8]) -> UInt64 {
        var value: UInt64 = 0
        for byte in hash.prefix(8) { value = value << 8 | UInt64(byte) }
        return value
    }
}
