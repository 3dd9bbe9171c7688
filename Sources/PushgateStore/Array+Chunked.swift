extension Array {
    /// The array cut into consecutive slices of at most `size` elements.
    package func chunked(by size: Int) -> [ArraySlice<Element>] {
        stride(from: 0, to: self.count, by: size).map { self[$0..<Swift.min($0 + size, self.count)] }
    }
}
