/// A configuration value as read from YAML, with mappings kept in file order.
public indirect enum ConfigValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case list([ConfigValue])
    case map(ConfigMap)

    /// The YAML type's name, for error messages.
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .int: "an integer"
        case .double: "a number"
        case .string: "a string"
        case .list: "a list"
        case .map: "a mapping"
        }
    }
}

/// A YAML mapping with string keys, in the order the file gives them.
public struct ConfigMap: Sendable, Equatable {
    /// The keys, in file order.
    public private(set) var keys: [String] = []
    private var values: [String: ConfigValue] = [:]
    /// The text as written of plain scalars YAML typed as a boolean or a number, by key.
    private var writtenTexts: [String: String] = [:]

    /// An empty mapping.
    public init() {}

    /// The value for `key`, if present.
    public subscript(key: String) -> ConfigValue? {
        get { self.values[key] }
        set {
            if self.values[key] == nil, newValue != nil { self.keys.append(key) }
            if newValue == nil { self.keys.removeAll { $0 == key } }
            self.values[key] = newValue
            self.writtenTexts[key] = nil
        }
    }

    /// How `key`'s value was written, when it is a plain scalar YAML read as a boolean or a number
    /// (`0123456701`, an octal integer; `1234E56789`, a float): what a key that takes text reads.
    public func writtenText(_ key: String) -> String? {
        self.writtenTexts[key]
    }

    /// Records how `key`'s value (set already) was written.
    mutating func recordWrittenText(_ text: String, for key: String) {
        self.writtenTexts[key] = text
    }

    /// The entries, in file order.
    public var entries: [(key: String, value: ConfigValue)] {
        self.keys.compactMap { key in self.values[key].map { (key, $0) } }
    }
}
