import Logging
import PushgateConfig
import PushgateCore
import ServiceLifecycle

/// Builds each configured app's delivery back end (the one place that knows the concrete back ends).
enum ProviderFactory {
    /// A back end and the service that owns its connections.
    typealias Built = (provider: any PushProvider, service: any Service)

    /// Builds every app's back end.
    /// - Throws: ``ConfigurationError`` naming the app key at fault.
    static func make(_ apps: [AppSettings], logger: Logger) throws -> [Built] {
        try apps.map { try self.make($0, logger: logger) }
    }

    static func make(_ app: AppSettings, logger: Logger) throws -> Built {
        switch app.kind {
        case .apns, .gcm, .webpush:
            throw ConfigurationError(key: app.options.keyPath("type"), "the \(app.kind.rawValue) back end is not available in this build yet")
        }
    }
}
