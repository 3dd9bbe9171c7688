public import PushgateCore

extension JSONValue {
    /// A configuration mapping as a JSON object, keeping its values' types.
    public init(_ map: ConfigMap) {
        var members: [String: JSONValue] = [:]
        for (key, value) in map.entries { members[key] = JSONValue(value) }
        self = .object(members)
    }

    /// A configuration value as JSON.
    public init(_ value: ConfigValue) {
        switch value {
        case .null: self = .null
        case .bool(let flag): self = .bool(flag)
        case .int(let number): self = .number(Double(number))
        case .double(let number): self = .number(number)
        case .string(let text): self = .string(text)
        case .list(let items): self = .array(items.map(JSONValue.init))
        case .map(let map): self = JSONValue(map)
        }
    }
}
