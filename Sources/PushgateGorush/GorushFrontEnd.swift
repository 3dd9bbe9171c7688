public import PushgateConfig
import PushgateCore
import Hummingbird
public import PushgateHTTP
import NIOCore
import ServiceLifecycle
import Logging
import HTTPTypes

/// The gorush-compatible front end as one ``FrontEnd``: `POST /api/push`, `GET /api/stat/app`,
/// `GET /healthz` and `GET /version` (HEAD wherever GET is) (paths as gorush's `api:` section sets them), on when the
/// configuration has a `gorush:` section that allows some callers.
public enum GorushFrontEnd {
    /// The front end's name in logs and delivery reports.
    public static let name = "gorush"
    /// The id the feedback webhook's back end must be registered under.
    public static let feedbackAppID = GorushFeedback.appID

    /// Builds the front end; nil when the configuration does not serve it.
    public static func make(_ environment: FrontEndEnvironment) -> FrontEnd? {
        guard let settings = environment.configuration.gorush, settings.isServed else { return nil }
        let stats = GorushStats(store: environment.store, factory: environment.metricsFactory, logger: environment.logger)
        let feedback = settings.feedbackHookURL.map { _ in GorushFeedback(dispatcher: environment.dispatcher, logger: environment.logger) }
        let (dispatcher, logger) = (environment.dispatcher, environment.logger)
        /// What a reload rebuilds: the callers' tokens, the apps and how gorush's fields pick them, the limits.
        @Sendable func route(_ settings: GorushSettings, _ apps: [AppSettings]) -> GorushPushRoute {
            let router = GorushAppRouter(settings: settings, apps: apps)
            let sender = GorushSender(
                settings: settings, planner: GorushPlanner(router: router, hideToken: settings.hideToken, hideMessages: settings.hideMessages),
                dispatcher: dispatcher, stats: stats, feedback: feedback, logger: logger
            )
            return GorushPushRoute(settings: settings, authenticator: GorushAuthenticator(settings: settings), sender: sender)
        }
        let live = LiveValue(route(settings, environment.configuration.apps))
        // Room for the largest request gorush takes, as the settings at the start allow.
        let maximumBody = settings.requestBodyLimit
        let routes = [
            GatewayRoute(.post, settings.pushPath, maximumBodySize: maximumBody) { request, context in
                Self.versioned(try await live.current.push(request, context: context))
            },
            GatewayRoute(.get, settings.statAppPath) { _, context in
                do {
                    return Self.versioned(GorushResponse.json(.ok, try await stats.appStatus(version: PushgateVersion.current)))
                } catch {
                    context.logger.error("gorush: cannot read the counters", metadata: ["error": "\(error)"])
                    return Self.versioned(GorushResponse.error(.serviceUnavailable, "The counters cannot be read now.", headers: [.retryAfter: "5"]))
                }
            },
            GatewayRoute(.get, settings.healthPath) { _, _ in Self.versioned(Response(status: .ok)) },
            GatewayRoute(.get, "/version") { _, _ in
                Self.versioned(GorushResponse.json(.ok, "{\"source\":\"pushgate\",\"version\":" + GoJSON.string(PushgateVersion.current) + "}"))
            },
        ]
        let observer = GorushOutcomeObserver(stats: stats, feedback: feedback, hideToken: settings.hideToken, hideMessages: settings.hideMessages)
        var services: [any Service] = []
        if settings.grpcEnabled {
            let grpc = GorushGRPCService(route: live)
            services.append(
                GorushGRPCServer(
                    host: environment.configuration.http.bindAddresses.first ?? "127.0.0.1", port: settings.grpcPort,
                    services: [grpc, GorushGRPCHealthService()], connections: environment.connections, logger: environment.logger
                )
            )
        }
        // The gateway's own refusals (a body over the limit, one that cannot be read) in gorush's shape.
        let shaped = routes.map { $0.answeringErrors { status, message in Self.versioned(GorushResponse.error(status, message)) } }
        return FrontEnd(
            name: Self.name, routes: shaped, services: services, countWriters: [stats], outcomeObserver: observer, figures: { await stats.figures() }
        ) {
            configuration in
            // What is fixed at start stays (`GorushSettings.reloaded(over:)`; a reload names it as needing a
            // restart). A file without the section, or without callers (no tokens, no unauthenticated
            // access), refuses every caller from now on; the routes themselves go at the next start.
            guard let reloaded = configuration.gorush, reloaded.isServed else {
                var closed = settings
                closed.authTokens = []
                closed.allowUnauthenticated = false
                live.replace(route(closed, configuration.apps))
                return
            }
            live.replace(route(reloaded.reloaded(over: settings), configuration.apps))
        }
    }

    /// gorush marks every answer with its version.
    /// gorush's answer at `/` (`rootHandler`), which probes written for gorush ask for (its Helm chart's
    /// readiness probe): served at `/` when the console, which redirects `/` to itself, is off.
    public static let welcomeRoute = GatewayRoute(.get, "/") { _, _ in
        Self.versioned(GorushResponse.json(.ok, #"{"text":"Welcome to notification server."}"#))
    }

    private static func versioned(_ response: Response) -> Response {
        var response = response
        response.headers[HTTPField.Name("X-GORUSH-VERSION")!] = PushgateVersion.current
        return response
    }

    /// The apps the `gorush` section names must exist with the right type.
    /// - Throws: ``ConfigurationError`` naming the key at fault.
    public static func check(_ configuration: GatewayConfiguration) throws {
        guard let settings = configuration.gorush else { return }
        let kinds = Dictionary(configuration.apps.map { ($0.id, $0.kind) }, uniquingKeysWith: { first, _ in first })
        let defaults = [("gorush.ios_app", settings.iosApp, AppSettings.Kind.apns), ("gorush.android_app", settings.androidApp, .gcm), ("gorush.huawei_app", settings.huaweiApp, .hms)]
        for (key, app, kind) in defaults {
            guard let app else { continue }
            guard let found = kinds[app] else { throw ConfigurationError(key: key, "names \(app), which is not configured under apps") }
            guard found == kind else { throw ConfigurationError(key: key, "names \(app), which is a \(found.rawValue) app, not \(kind.rawValue)") }
        }
        for (index, token) in settings.authTokens.enumerated() {
            for app in (token.apps ?? []).sorted() where kinds[app] == nil {
                throw ConfigurationError(key: "gorush.auth_tokens[\(index)].apps", "names \(app), which is not configured under apps")
            }
        }
    }
}
