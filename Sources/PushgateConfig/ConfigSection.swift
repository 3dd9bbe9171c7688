/// Reads typed keys out of one mapping of the configuration and remembers which keys it read, so the
/// rest can be reported as unknown.
public struct ConfigSection: Sendable {
    /// The dotted path of this mapping (empty for the top level).
    public let path: String
    /// The mapping's contents.
    public let map: ConfigMap

    /// Wraps `map`, found at `path`.
    public init(path: String, map: ConfigMap) {
        self.path = path
        self.map = map
    }

    /// The dotted path of `key` inside this section.
    public func keyPath(_ key: String) -> String {
        self.path.isEmpty ? key : "\(self.path).\(key)"
    }

    /// The keys present here that are not in `known`, as dotted paths.
    public func unknownKeys(known: Set<String>) -> [String] {
        self.map.keys.filter { !known.contains($0) }.map(self.keyPath)
    }

    private func present(_ key: String) -> ConfigValue? {
        switch self.map[key] {
        case nil, .null?: nil
        case let value?: value
        }
    }

    private func mismatch(_ key: String, _ expected: String, _ value: ConfigValue) -> ConfigurationError {
        ConfigurationError(key: self.keyPath(key), "expected \(expected), found \(value.typeName)")
    }

    /// A string; numbers and booleans written without quotes are accepted as the text written (a key id
    /// `0123456701` is not the octal number it reads as in YAML 1.1, nor a team id `1234E56789` infinity).
    public func string(_ key: String) throws -> String? {
        switch self.present(key) {
        case nil: nil
        case .string(let value)?: value
        case .int(let value)?: self.map.writtenText(key) ?? String(value)
        case .double(let value)?: self.map.writtenText(key) ?? String(value)
        case .bool(let value)?: self.map.writtenText(key) ?? String(value)
        case let value?: throw self.mismatch(key, "a string", value)
        }
    }

    /// An integer; a quoted integer is accepted too.
    public func int(_ key: String, in range: ClosedRange<Int>? = nil) throws -> Int? {
        let number: Int
        switch self.present(key) {
        case nil: return nil
        case .int(let value)?: number = value
        case .string(let text)?:
            guard let value = Int(text) else { throw self.mismatch(key, "an integer", .string(text)) }
            number = value
        case let value?: throw self.mismatch(key, "an integer", value)
        }
        if let range, !range.contains(number) {
            throw ConfigurationError(key: self.keyPath(key), "must be between \(range.lowerBound) and \(range.upperBound), found \(number)")
        }
        return number
    }

    /// A number of seconds, whole or fractional (`5`, `0.5`, `'2.5'`), within `range`.
    public func seconds(_ key: String, in range: ClosedRange<Double>) throws -> Double? {
        let number: Double
        switch self.present(key) {
        case nil: return nil
        case .int(let value)?: number = Double(value)
        case .double(let value)?: number = value
        case .string(let text)?:
            guard let value = Double(text), value.isFinite else { throw self.mismatch(key, "a number of seconds", .string(text)) }
            number = value
        case let value?: throw self.mismatch(key, "a number of seconds", value)
        }
        guard range.contains(number) else {
            throw ConfigurationError(key: self.keyPath(key), "must be between \(range.lowerBound) and \(range.upperBound) seconds, found \(number)")
        }
        return number
    }

    /// A boolean.
    public func bool(_ key: String) throws -> Bool? {
        switch self.present(key) {
        case nil: nil
        case .bool(let value)?: value
        case let value?: throw self.mismatch(key, "true or false", value)
        }
    }

    /// A list of strings; a single string is taken as a list of one.
    public func stringList(_ key: String) throws -> [String]? {
        switch self.present(key) {
        case nil: return nil
        case .string(let value)?: return [value]
        case .list(let items)?:
            return try items.enumerated().map { index, item in
                guard case .string(let value) = item else {
                    throw ConfigurationError(key: "\(self.keyPath(key))[\(index)]", "expected a string, found \(item.typeName)")
                }
                return value
            }
        case let value?: throw self.mismatch(key, "a list of strings", value)
        }
    }

    /// A nested mapping, as a section.
    public func section(_ key: String) throws -> ConfigSection? {
        switch self.present(key) {
        case nil: nil
        case .map(let map)?: ConfigSection(path: self.keyPath(key), map: map)
        case let value?: throw self.mismatch(key, "a mapping", value)
        }
    }
}
