/// Room in a JSON object's members for more keys, without `Dictionary.reserveCapacity`.
///
/// The standard library keeps `reserveCapacity` and `Dictionary(minimumCapacity:)` generic: each call looks
/// up the storage type's metadata by its generic arguments, which cost more than the few insertions it
/// was meant to spare. Objects read by ``JSONParser`` already have room for ``emptyCapacity`` members, and an
/// empty object starts as a copy of one that has it; only a larger object still reserves the generic way.
extension Dictionary where Key == String, Value == JSONValue {
    /// How many members an object starting from ``emptyWithRoom`` holds before it grows.
    public static let emptyCapacity = 8

    /// An empty object with room for ``emptyCapacity`` members, to copy.
    public static let emptyWithRoom = [String: JSONValue](minimumCapacity: Self.emptyCapacity)

    /// Makes sure `extra` more members go in without the storage growing (rehashing every member).
    public mutating func makeRoom(for extra: Int) {
        let needed = self.count + extra
        guard self.capacity < needed else { return }
        if self.isEmpty, needed <= Self.emptyCapacity {
            self = Self.emptyWithRoom
        } else {
            self.reserveCapacity(needed)
        }
    }
}
