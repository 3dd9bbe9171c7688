extension JSONValue {
    /// `self` with `overlay` merged over it: objects merge member by member, anything else is replaced.
    public func merging(_ overlay: JSONValue) -> JSONValue {
        guard case .object(let base) = self, case .object(let top) = overlay else { return overlay }
        var merged = base
        for (key, value) in top {
            merged[key] = merged[key].map { $0.merging(value) } ?? value
        }
        return .object(merged)
    }
}
