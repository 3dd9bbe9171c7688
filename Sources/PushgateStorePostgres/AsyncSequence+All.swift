extension AsyncSequence where Self: Sendable {
    /// Every element, in order.
    func all() async throws -> [Element] {
        var elements: [Element] = []
        for try await element in self {
            elements.append(element)
        }
        return elements
    }
}
