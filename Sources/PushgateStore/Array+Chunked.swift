extension Array {
    /// The array cut into consecutive slices of at most `size` elements (one slice of the whole, without
    /// a stride, when it fits).
    package func chunked(by size: Int) -> [ArraySlice<Element>] {
        if self.count <= size { return self.isEmpty ? [] : [self[...]] }
        return stride(from: 0, to: self.count, by: size).map { self[$0..<Swift.min($0 + size, self.count)] }
    }
}
