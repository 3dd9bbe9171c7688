extension JSONParser {
    /// Reads the next value and returns it when it is a number written as an integer (no fraction, no
    /// exponent) within `Int64`'s range, exactly: above 2⁵³, where the `Double` of ``readValue()`` rounds
    /// (nanosecond timestamps), too. Any other value gives nil; it is read past all the same, held to the
    /// same rules as in ``readValue()``.
    public mutating func readExactInteger() throws(Failure) -> Int64? {
        guard self.nextKind == .number else {
            try self.skipValue()
            return nil
        }
        let start = self.position
        _ = try self.number()
        var index = start
        let negative = self.bytes[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        var magnitude: UInt64 = 0
        while index < self.position {
            let byte = self.bytes[index]
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            let (tenfold, overflowed) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, carried) = tenfold.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
            guard !overflowed, !carried else { return nil }
            magnitude = sum
            index += 1
        }
        if negative {
            return magnitude <= UInt64(Int64.max) + 1 ? Int64(truncatingIfNeeded: 0 &- magnitude) : nil
        }
        return magnitude <= UInt64(Int64.max) ? Int64(magnitude) : nil
    }
}
