import PushgateConfig
import PushgateCore

extension JSONValue {
    /// A configuration mapping as a JSON object, keeping its values' types.
    init(_ map: ConfigMap) {
        var members: [String: JSONValue] = [:]
        for (key, value) in map.entries { members[key] = JSONValue(value) }
        self = .object(members)
    }

    /// A configuration value as JSON.
    init(_ value: ConfigValue) {
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

    /// `self` with `overlay` merged over it: objects merge member by member, anything else is replaced.
    func merging(_ overlay: JSONValue) -> JSONValue {
        guard case .object(let base) = self, case .object(let top) = overlay else { return overlay }
        var merged = base
        for (key, value) in top {
            merged[key] = merged[key].map { $0.merging(value) } ?? value
        }
        return .object(merged)
    }
}
