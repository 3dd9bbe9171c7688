extension String {
    /// How many of the string's UTF-8 bytes match `matches`: one pass over its contiguous bytes without an
    /// early exit, which the compiler vectorises (walking `utf8` index by index, or `allSatisfy` over it,
    /// costs several instructions a byte, and header values such as access tokens are hundreds of bytes).
    @inlinable @inline(__always)
    public func utf8Count(where matches: (UInt8) -> Bool) -> Int {
        var text = self
        return text.withUTF8 { bytes in
            var found = 0
            for byte in bytes { found &+= matches(byte) ? 1 : 0 }
            return found
        }
    }
}
