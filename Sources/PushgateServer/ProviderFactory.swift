import CoreMetrics
import Logging
import PushgateAPNs
import PushgateConfig
import PushgateCore
import PushgateFCM
import PushgateHMS
import PushgateProviderSupport
import PushgateUnifiedPush
import PushgateWebPush
import ServiceLifecycle

/// Builds each configured app's delivery back end (the one place that knows the concrete back ends).
///
/// In two steps: ``configure(_:)`` reads and checks an app's settings and key files and holds no
/// resources, so a configuration error stops start-up before anything is opened; ``build(_:logger:)``
/// then creates the back end, which owns connections until its service shuts down.
enum ProviderFactory {
    /// A back end and the service that owns its connections.
    typealias Built = (provider: any PushProvider, service: any Service)

    /// A checked app configuration.
    enum Configured: Sendable {
        case apns(APNsConfiguration)
        case webPush(WebPushConfiguration)
        case fcm(FCMConfiguration)
        case hms(HMSConfiguration)
        case unifiedPush(UnifiedPushConfiguration)

        /// Keys of the app that no back end reads.
        var unknownKeys: [String] {
            switch self {
            case .webPush(let configuration): configuration.unknownKeys
            case .fcm(let configuration): configuration.unknownKeys
            case .apns(let configuration): configuration.unknownKeys
            case .hms(let configuration): configuration.unknownKeys
            case .unifiedPush(let configuration): configuration.unknownKeys
            }
        }

        /// Settings that are valid but seldom meant: an `allowed_endpoints` glob that matches every host
        /// (`*`) lets endpoints reach private and loopback addresses, over plain http too.
        var warnings: [String] {
            switch self {
            case .webPush(let configuration): Self.endpointWarnings(configuration.allowedEndpoints, appID: configuration.appID)
            case .unifiedPush(let configuration): Self.endpointWarnings(configuration.allowedEndpoints, appID: configuration.appID)
            case .fcm, .apns, .hms: []
            }
        }

        private static func endpointWarnings(_ globs: [String]?, appID: String) -> [String] {
            (globs ?? []).filter { glob in
                let pattern = HostGlob(glob)
                return pattern.matches("10.0.0.1:443") && pattern.matches("127.0.0.1:8080")
            }.map { glob in
                "apps.\(appID).allowed_endpoints: \(glob) matches every host, so endpoints may be private or loopback addresses "
                    + "and plain http (internal services reachable through pushkeys); list the push services' hosts instead"
            }
        }

        /// What the app's credentials say about themselves (certificate files are read again).
        var credentials: [ProviderCredential] {
            switch self {
            case .webPush(let configuration): configuration.credentials()
            case .fcm(let configuration): configuration.credentials()
            case .apns(let configuration): configuration.credentials()
            case .hms(let configuration): configuration.credentials()
            // A UnifiedPush app sends to its subscribers' distributors with no credential of its own.
            case .unifiedPush: []
            }
        }
    }

    /// Checks every app's settings.
    /// - Throws: ``ConfigurationError`` naming the key at fault.
    static func configure(_ apps: [AppSettings], proxy: OutboundProxy?) throws -> [Configured] {
        try apps.map { try Self.configure($0, proxy: proxy) }
    }

    /// Checks one app's settings; its provider requests will go through `proxy` when given.
    static func configure(_ app: AppSettings, proxy: OutboundProxy?) throws -> Configured {
        switch app.kind {
        case .webpush:
            var configuration = try WebPushConfiguration(settings: app)
            configuration.proxy = proxy
            return .webPush(configuration)
        case .gcm:
            var configuration = try FCMConfiguration(settings: app)
            configuration.proxy = proxy
            return .fcm(configuration)
        case .apns:
            var configuration = try APNsConfiguration(settings: app)
            configuration.proxy = proxy
            return .apns(configuration)
        case .hms:
            var configuration = try HMSConfiguration(settings: app)
            configuration.proxy = proxy
            return .hms(configuration)
        case .unifiedpush:
            var configuration = try UnifiedPushConfiguration(settings: app)
            configuration.proxy = proxy
            return .unifiedPush(configuration)
        }
    }

    /// Creates a back end from a checked configuration.
    /// - Throws: only what ``configure(_:)`` already checked (a key that no longer parses), before any
    ///   connection is made.
    static func build(_ configured: Configured, logger: Logger, metricsFactory: (any MetricsFactory)? = nil) throws -> Built {
        switch configured {
        case .webPush(let configuration):
            let provider = WebPushProvider(configuration: configuration, logger: logger, metricsFactory: metricsFactory)
            return (provider, provider)
        case .fcm(let configuration):
            let provider = try FCMProvider(configuration: configuration, logger: logger, metricsFactory: metricsFactory)
            return (provider, provider)
        case .apns(let configuration):
            let provider = try APNsProvider(
                configuration: configuration, logger: logger, metricsFactory: metricsFactory, tokens: .shared
            )
            return (provider, provider)
        case .hms(let configuration):
            let provider = HMSProvider(configuration: configuration, logger: logger, metricsFactory: metricsFactory)
            return (provider, provider)
        case .unifiedPush(let configuration):
            let provider = UnifiedPushProvider(configuration: configuration, logger: logger, metricsFactory: metricsFactory)
            return (provider, provider)
        }
    }
}

extension [ProviderFactory.Configured] {
    /// What start-up, a reload and check-config say of the apps' settings: each unknown key, then the
    /// settings seldom meant (``ProviderFactory/Configured/warnings``).
    var configurationWarnings: [String] {
        self.flatMap(\.unknownKeys).map { "unknown key \($0) (ignored)" } + self.flatMap(\.warnings)
    }
}
