import Foundation
import Logging
import PushgateStore
import PushgateStoreSQLite
import Testing

/// The SQLite database holds push tokens and notifications: a file the store makes is its owner's alone
/// (and so are the write-ahead log and shared-memory files SQLite makes beside it), whatever the umask; a
/// file that exists keeps the mode its operator gave it.
@Suite("SQLite file modes")
struct SQLiteFileModeTests {
    static func mode(_ path: String) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    @Test func aDatabaseTheStoreMakesIsItsOwnersAlone() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pushgate-mode-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        let made = directory.appendingPathComponent("made.sqlite").path
        let store = try await SQLiteStore.open(path: made, logger: logger)
        _ = try await store.enqueue([OutboxMessage(appID: "a", pushTokens: ["t"], payload: [1], notBefore: Date())])
        #expect(try Self.mode(made) == 0o600)
        #expect(try Self.mode(made + "-wal") == 0o600)

        let existing = directory.appendingPathComponent("existing.sqlite").path
        #expect(FileManager.default.createFile(atPath: existing, contents: nil, attributes: [.posixPermissions: 0o640]))
        _ = try await SQLiteStore.open(path: existing, logger: logger)
        #expect(try Self.mode(existing) == 0o640)
    }
}
