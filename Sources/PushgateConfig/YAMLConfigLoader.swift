import Foundation
import Yams

/// Turns YAML text into ``ConfigValue``s, resolving scalars as YAML 1.1 does (as Sygnal's loader does).
enum YAMLConfigLoader {
    static func load(yaml: String) throws -> ConfigValue {
        let node: Node?
        do {
            node = try Yams.compose(yaml: yaml)
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

    private static func value(_ node: Node, path: String) throws -> ConfigValue {
        switch node {
        case .scalar:
            switch Tag.Name(rawValue: node.tag.rawValue) {
            case Tag.Name.null: return .null
            case Tag.Name.bool: return node.bool.map(ConfigValue.bool) ?? .string(node.string ?? "")
            case Tag.Name.int: return node.int.map(ConfigValue.int) ?? .string(node.string ?? "")
            case Tag.Name.float: return node.float.map(ConfigValue.double) ?? .string(node.string ?? "")
            default: return .string(node.string ?? "")
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
                map[key] = try self.value(valueNode, path: childPath)
            }
            return .map(map)
        case .alias:
            throw ConfigurationError(key: path, "YAML aliases are not supported")
        }
    }
}
