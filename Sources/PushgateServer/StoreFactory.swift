import Logging
import PushgateConfig
import PushgateStore
import PushgateStorePostgres
import PushgateStoreSQLite

/// Opens the store the configuration names (the one place that knows the concrete stores).
enum StoreFactory {
    static func open(_ settings: DatabaseSettings, callTimeout: Duration, logger: Logger) async throws -> any PushStore {
        switch settings {
        case .sqlite(let path):
            return try await SQLiteStore.open(path: path, logger: logger)
        case .postgres(let postgres):
            let tls: PostgresStoreConfiguration.TLSMode =
                switch postgres.sslMode {
                case .disable: .disable
                case .prefer: .prefer
                case .require: .require
                }
            return try await PostgresStore.connect(
                PostgresStoreConfiguration(
                    host: postgres.host, port: postgres.port, username: postgres.username, password: postgres.password,
                    database: postgres.database, tls: tls, maximumConnections: postgres.maximumConnections,
                    statementTimeout: PostgresStoreConfiguration.statementTimeout(forCallsOf: callTimeout)
                ),
                logger: logger
            )
        }
    }
}
