public import Foundation

/// A directory of its own for one test, removed when the value is no longer used.
public final class TemporaryDirectory: Sendable {
    /// The directory.
    public let url: URL

    /// Creates an empty directory under the system's temporary directory.
    public init() throws {
        self.url = FileManager.default.temporaryDirectory.appendingPathComponent("pushgate-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: self.url, withIntermediateDirectories: true)
    }

    /// The path of `name` inside the directory.
    public func path(_ name: String) -> String { self.url.appendingPathComponent(name).path }

    /// Writes `text` to `name` and returns its path.
    public func write(_ name: String, _ text: String) throws -> String {
        let path = self.path(name)
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    deinit { try? FileManager.default.removeItem(at: self.url) }
}
