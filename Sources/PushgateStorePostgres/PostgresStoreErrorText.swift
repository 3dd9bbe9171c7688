import PostgresNIO
import PushgateStore

/// Turns what postgres-nio throws into a ``StoreError`` whose message names what went wrong without the
/// values involved: ``PostgresStore/storeError(for:)``, through which ``PushgateStore/BoundedStore`` turns
/// every error of a store call, and the migration's own error.
///
/// `String(reflecting:)` of a `PSQLError` carries the server's `detail` ("Key (push_token)=(…) already
/// exists", "Failing row contains (…)") and a `PostgresDecodingError` the cell's bytes: device tokens,
/// public keys and payloads. Those messages reach logs and `/health`, so only names the schema gives
/// (SQLSTATE, table, column, constraint, type) and the client's own error codes are kept. A transaction's
/// error (`PostgresTransactionError`) is described by the error inside it.
enum PostgresStoreErrorText {
    /// The ``StoreError`` for `error`: a ``StoreError`` as it is, a column that cannot be decoded as
    /// ``StoreError/corruptRow(_:)``, anything else as ``StoreError/unavailable(_:)``.
    static func storeError(for error: any Error) -> StoreError {
        if let error = error as? StoreError { return error }
        if let error = error as? PostgresTransactionError, let inner = Self.innermost(error), inner is StoreError || inner is PostgresDecodingError {
            return Self.storeError(for: inner)
        }
        if let error = error as? PostgresDecodingError {
            return .corruptRow("PostgreSQL: column \(error.columnName) (\(error.postgresType)) cannot be read as \(error.targetType)")
        }
        return .unavailable("PostgreSQL: " + Self.text(for: error))
    }

    /// What went wrong, in words without values: SQLSTATE and schema names for a server's error, the
    /// client's error code and the socket's or TLS's error for the others.
    static func text(for error: any Error) -> String {
        Self.describe(error, depth: 0)
    }

    /// The error that made a transaction fail: its body's, else `BEGIN`'s, else `COMMIT`'s.
    private static func innermost(_ error: PostgresTransactionError) -> (any Error)? {
        error.closureError ?? error.beginError ?? error.commitError
    }

    private static func describe(_ error: any Error, depth: Int) -> String {
        guard depth < 3 else { return String(describing: type(of: error)) }
        switch error {
        case let error as PSQLError:
            return Self.describe(error, depth: depth)
        case let error as PostgresTransactionError:
            var text = Self.innermost(error).map { Self.describe($0, depth: depth + 1) } ?? "the transaction failed"
            if error.rollbackError != nil { text += " (and its rollback failed)" }
            return text
        case let error as PostgresDecodingError:
            return "column \(error.columnName) (\(error.postgresType)) cannot be read as \(error.targetType)"
        case let error as StoreError:
            return error.message
        case is CancellationError:
            return "cancelled"
        default:
            // Errors from below the client (NIO sockets, TLS) name the failure, not rows' values.
            return String(describing: error)
        }
    }

    private static func describe(_ error: PSQLError, depth: Int) -> String {
        guard let server = error.serverInfo else {
            var text = "\(error.code)"
            if let underlying = error.underlying { text += ": " + Self.describe(underlying, depth: depth + 1) }
            return text
        }
        let state = server[.sqlState] ?? "?????"
        var text = "SQLSTATE \(state)"
        if let meaning = Self.meaning(ofSQLState: state) { text += " (\(meaning))" }
        let names: [(String, PSQLError.ServerInfo.Field)] = [
            ("table", .tableName), ("column", .columnName), ("constraint", .constraintName), ("type", .dataTypeName),
        ]
        for (label, field) in names {
            if let name = server[field] { text += ", \(label) \(name)" }
        }
        return text
    }

    /// What the SQLSTATEs an operator of the gateway is most likely to meet mean, else what their class
    /// means (PostgreSQL's Appendix A).
    static func meaning(ofSQLState state: String) -> String? {
        switch state {
        case "57014": return "statement cancelled: the statement timeout or a cancel request"
        case "25P03": return "idle-in-transaction timeout"
        case "23505": return "unique violation"
        case "23502": return "not-null violation"
        case "23514": return "check violation"
        case "22001": return "value too long"
        case "22021": return "a byte sequence that is not valid in the database's encoding"
        case "40001": return "serialization failure"
        case "40P01": return "deadlock detected"
        case "53300": return "too many connections"
        case "57P01", "57P02", "57P03": return "the server is shutting down or starting up"
        case "28P01", "28000": return "authentication failed"
        case "3D000": return "no such database"
        case "42501": return "insufficient privilege"
        default: break
        }
        switch state.prefix(2) {
        case "08": return "connection exception"
        case "22": return "data exception"
        case "23": return "integrity constraint violation"
        case "25": return "invalid transaction state"
        case "40": return "transaction rollback"
        case "42": return "syntax error or access rule violation"
        case "53": return "insufficient resources"
        case "54": return "program limit exceeded"
        case "57": return "operator intervention"
        case "58": return "system error"
        case "XX": return "internal error"
        default: return nil
        }
    }
}
