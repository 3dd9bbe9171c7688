import Crypto
import Foundation
import PushgateConfig

/// What an app's back end is built from: its settings and the contents of the files they name (keys,
/// certificates, service-account files). A reload rebuilds an app's back end when this changes, so a
/// credential rotated in place, under the same file name, is taken up too.
struct AppFingerprint: Sendable, Equatable {
    /// The app's settings as written.
    var settings: AppSettings
    /// SHA-256 of each file a string setting names, by path.
    var files: [String: SHA256.Digest]

    /// Reads the files `settings` names (a string value that is the path of a readable regular file).
    init(_ settings: AppSettings) {
        self.settings = settings
        var files: [String: SHA256.Digest] = [:]
        for path in Self.strings(in: settings.options.map) where files[path] == nil {
            if let digest = Self.digest(ofFile: path) { files[path] = digest }
        }
        self.files = files
    }

    /// Key files are small; anything larger is not a credential.
    private static let largestFile = 1 << 20

    private static func digest(ofFile path: String) -> SHA256.Digest? {
        guard !path.isEmpty, !path.contains("\n"),
            let attributes = try? FileManager.default.attributesOfItem(atPath: path),
            attributes[.type] as? FileAttributeType == .typeRegular,
            let size = attributes[.size] as? Int, size <= Self.largestFile,
            let contents = FileManager.default.contents(atPath: path)
        else { return nil }
        return SHA256.hash(data: contents)
    }

    private static func strings(in map: ConfigMap) -> [String] {
        map.entries.flatMap { Self.strings(in: $0.value) }
    }

    private static func strings(in value: ConfigValue) -> [String] {
        switch value {
        case .string(let string): [string]
        case .list(let values): values.flatMap { Self.strings(in: $0) }
        case .map(let map): Self.strings(in: map)
        case .null, .bool, .int, .double: []
        }
    }
}
