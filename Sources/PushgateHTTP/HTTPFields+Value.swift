public import HTTPTypes

extension HTTPFields {
    /// The value of the field `name` as `self[name]` gives it (nil when absent; the values of a repeated
    /// field joined as that subscript joins them), without the subscript's cost when the field appears
    /// once: it joins even a single value through unspecialised generic code, about 3,500 instructions a
    /// call, and the gateway reads a header or two on every request.
    public func value(of name: HTTPField.Name) -> String? {
        var found: String?
        for field in self where field.name == name {
            if found != nil { return self[name] }
            found = field.value
        }
        return found
    }
}
