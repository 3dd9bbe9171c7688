/// Errors a store reports, whatever its database.
public struct StoreError: Error, Sendable, Equatable, CustomStringConvertible {
    private enum Code: Sendable, Equatable {
        case unavailable
        case schemaTooNew
        case invalidConfiguration
        case corruptRow
    }

    private let code: Code
    /// What happened, without secrets.
    public let message: String

    private init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The database could not be reached or answered with an error.
    public static func unavailable(_ message: String) -> Self { .init(.unavailable, message) }
    /// The database was migrated by a newer Pushgate than this one.
    public static func schemaTooNew(_ message: String) -> Self { .init(.schemaTooNew, message) }
    /// The database settings are wrong (bad URL, unreadable path).
    public static func invalidConfiguration(_ message: String) -> Self { .init(.invalidConfiguration, message) }
    /// A stored row could not be decoded.
    public static func corruptRow(_ message: String) -> Self { .init(.corruptRow, message) }

    /// Whether two errors are of the same kind, whatever their messages.
    public func isSameKind(as other: StoreError) -> Bool { self.code == other.code }

    public var description: String { self.message }
}
