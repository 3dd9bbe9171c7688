import Foundation
import Logging

enum TestLogging {
    static let quiet: Logger = {
        var logger = Logger(label: "pushgate.tests")
        logger.logLevel = .critical
        return logger
    }()
}

/// A directory removed when the value is no longer used.
final class TemporaryDirectory: Sendable {
    let url: URL

    init() throws {
        self.url = FileManager.default.temporaryDirectory.appendingPathComponent("pushgate-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: self.url, withIntermediateDirectories: true)
    }

    func path(_ name: String) -> String { self.url.appendingPathComponent(name).path }

    func write(_ name: String, _ text: String) throws -> String {
        let path = self.path(name)
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    deinit { try? FileManager.default.removeItem(at: self.url) }
}
