extension Array where Element == UInt8 {
    /// Appends the UTF-8 bytes of `text`, copied from its contiguous storage in one step when it has one
    /// (every native string; a bridged one is walked byte by byte).
    @inlinable
    public mutating func appendUTF8(_ text: String) {
        let copied: Void? = text.utf8.withContiguousStorageIfAvailable { bytes in self.append(contentsOf: bytes) }
        if copied == nil { self.append(contentsOf: text.utf8) }
    }
}
