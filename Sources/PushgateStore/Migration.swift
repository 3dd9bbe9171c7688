/// One versioned step of a store's schema.
public struct Migration: Sendable, Equatable {
    /// The schema version this step produces; versions start at 1 and increase by 1.
    public let version: Int
    /// What the step does, for the migrations table and the logs.
    public let name: String
    /// The statements to run, in order, in one transaction.
    public let statements: [String]

    /// Creates a migration step.
    public init(version: Int, name: String, statements: [String]) {
        self.version = version
        self.name = name
        self.statements = statements
    }
}

/// The ordered list of a store's migrations, and what to run on a database at a given version.
public struct MigrationPlan: Sendable {
    /// All steps, by increasing version.
    public let migrations: [Migration]

    /// Creates a plan.
    /// - Precondition: versions are 1, 2, 3, … in order (a programming error otherwise).
    public init(_ migrations: [Migration]) {
        for (index, migration) in migrations.enumerated() {
            precondition(migration.version == index + 1, "migration versions must be 1, 2, 3, … in order")
        }
        self.migrations = migrations
    }

    /// The newest version this build knows.
    public var latestVersion: Int { self.migrations.last?.version ?? 0 }

    /// The steps to run on a database whose newest applied version is `current`.
    /// - Throws: ``StoreError/schemaTooNew(_:)`` when the database is newer than this build.
    public func pending(after current: Int) throws -> ArraySlice<Migration> {
        guard current <= self.latestVersion else {
            throw StoreError.schemaTooNew(
                "the database schema is at version \(current) but this Pushgate knows only up to \(self.latestVersion); upgrade Pushgate"
            )
        }
        return self.migrations[current...]
    }
}
