import Foundation
import Yams

/// Turns YAML text into ``ConfigValue``s, resolving scalars as YAML 1.1 does (as Sygnal's loader does).
enum YAMLConfigLoader {
    static func load(yaml: String) throws -> ConfigValue {
        let node: Node?
        do {
            // Yams's basic resolver leaves plain scalars untagged; ``YAML11PlainScalar`` tags them without
            // the default resolver's regular expressions (and ICU).
            node = try Yams.compose(yaml: yaml, Resolver.basic, Constructor.default)
        } catch {
            throw ConfigurationError(key: "", "the file is not valid YAML: \(Self.describe(error))")
        }
        guard let node else { return .map(ConfigMap()) }
        return try self.value(node, path: "")
    }

    /// A YAML error as its problem and position only: Yams's own description quotes the offending line,
    /// which may hold a password or a key.
    static func describe(_ error: any Error) -> String {
        guard let error = error as? YamlError else { return "unreadable text" }
        func at(_ mark: Mark) -> String { "line \(mark.line), column \(mark.column)" }
        switch error {
        case .scanner(let context, let problem, let mark, _), .parser(let context, let problem, let mark, _),
            .composer(let context, let problem, let mark, _):
            let while_ = context.map { "\($0.text) (\(at($0.mark))): " } ?? ""
            return "\(while_)\(problem) at \(at(mark))"
        case .reader(let problem, let offset, _, _):
            return offset.map { "\(problem) at byte \($0)" } ?? problem
        case .duplicatedKeysInMapping(let duplicates, let context):
            return "duplicated keys \(duplicates.joined(separator: ", ")) at \(at(context.mark))"
        case .dataCouldNotBeDecoded:
            return "the text is not in a known encoding"
        default:
            return "unreadable text"
        }
    }

    /// A YAML 1.1 int. Yams reads the sexagesimal form (`1:30` is 90) with unchecked arithmetic, and one
    /// too large for `Int` (`1:0:0:0:0:0:0:0:0:0:0`) trapped the process, on a reload too; it is read here
    /// with checked arithmetic, and one that does not fit stays text (which a key wanting a number refuses).
    static func int(_ scalar: Node.Scalar) -> Int? {
        let text = scalar.string
        guard text.contains(":") else { return Int.construct(from: scalar) }
        var body = Substring(text)
        let negative = body.first == "-"
        if body.first == "-" || body.first == "+" { body = body.dropFirst() }
        var value = 0
        for group in body.split(separator: ":", omittingEmptySubsequences: false) {
            guard let digits = Int(group.filter { $0 != "_" }) else { return nil }
            let (scaled, scaleOverflow) = value.multipliedReportingOverflow(by: 60)
            let (sum, sumOverflow) = scaled.addingReportingOverflow(digits)
            guard !scaleOverflow, !sumOverflow else { return nil }
            value = sum
        }
        return negative ? -value : value
    }

    private static func value(_ node: Node, path: String) throws -> ConfigValue {
        switch node {
        case .scalar(let scalar):
            // The tag as written (empty for a plain scalar without one; quoted scalars are str).
            let written = scalar.tag.description
            let text = scalar.string
            switch written.isEmpty ? YAML11PlainScalar.tag(of: text) : Tag.Name(rawValue: written) {
            case Tag.Name.null: return .null
            case Tag.Name.bool: return Self.bool(text).map(ConfigValue.bool) ?? .string(text)
            case Tag.Name.int: return Self.int(scalar).map(ConfigValue.int) ?? .string(text)
            case Tag.Name.float: return Double.construct(from: scalar).map(ConfigValue.double) ?? .string(text)
            default: return .string(text)
            }
        case .sequence(let sequence):
            return .list(try sequence.enumerated().map { try self.value($1, path: "\(path)[\($0)]") })
        case .mapping(let mapping):
            var map = ConfigMap()
            for (keyNode, valueNode) in mapping {
                guard let key = keyNode.string else {
                    throw ConfigurationError(key: path, "mapping keys must be strings")
                }
                let childPath = path.isEmpty ? key : "\(path).\(key)"
                if map[key] != nil { throw ConfigurationError(key: childPath, "is given twice") }
                let value = try self.value(valueNode, path: childPath)
                map[key] = value
                switch (valueNode, value) {
                case (.scalar(let scalar), .bool), (.scalar(let scalar), .int), (.scalar(let scalar), .double):
                    map.recordWrittenText(scalar.string, for: key)
                default:
                    break
                }
            }
            return .map(map)
        case .alias:
            throw ConfigurationError(key: path, "YAML aliases are not supported")
        }
    }

    /// A YAML 1.1 boolean's value, in any case.
    private static func bool(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "true", "yes", "on": return true
        case "false", "no", "off": return false
        default: return nil
        }
    }
}
