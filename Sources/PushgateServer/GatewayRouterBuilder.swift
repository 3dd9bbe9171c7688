public import Hummingbird
public import PushgateHTTP

/// Builds the router every listener shares: the gateway's middleware (``GatewayMiddleware``) around a list
/// of routes.
public enum GatewayRouterBuilder {
    /// Builds a router.
    /// - Parameters:
    ///   - routes: every route the gateway answers.
    ///   - metrics: where request counts and latencies go.
    ///   - maxRequestBodySize: bodies over this many bytes get 413 (routes may allow more).
    ///   - accessLogUsesForwardedFor: take client addresses from `X-Forwarded-For`.
    public static func build(
        routes: [GatewayRoute],
        metrics: GatewayMetrics,
        maxRequestBodySize: Int,
        accessLogUsesForwardedFor: Bool = false
    ) -> Router<GatewayRequestContext> {
        let middleware = Self.middleware(
            routes: routes, metrics: metrics, maxRequestBodySize: maxRequestBodySize, accessLogUsesForwardedFor: accessLogUsesForwardedFor
        )
        return Self.router(routes: routes, middleware: middleware)
    }

    /// Builds the responder the listeners use: the router of
    /// ``build(routes:metrics:maxRequestBodySize:accessLogUsesForwardedFor:)`` behind a
    /// ``StaticRouteResponder``, which answers the routes' fixed paths without the router's path lookup.
    /// The parameters are those of `build`.
    public static func responder(
        routes: [GatewayRoute],
        metrics: GatewayMetrics,
        maxRequestBodySize: Int,
        accessLogUsesForwardedFor: Bool = false
    ) -> some HTTPResponder<GatewayRequestContext> {
        let middleware = Self.middleware(
            routes: routes, metrics: metrics, maxRequestBodySize: maxRequestBodySize, accessLogUsesForwardedFor: accessLogUsesForwardedFor
        )
        let router = Self.router(routes: routes, middleware: middleware)
        return StaticRouteResponder(routes: routes, middleware: middleware, fallback: router.buildResponder())
    }

    private static func middleware(
        routes: [GatewayRoute], metrics: GatewayMetrics, maxRequestBodySize: Int, accessLogUsesForwardedFor: Bool
    ) -> GatewayMiddleware {
        GatewayMiddleware(
            accessLog: AccessLog(metrics: metrics, usesForwardedFor: accessLogUsesForwardedFor),
            errors: ErrorAnswers(routeMethods: RouteMethods(routes: routes)),
            limits: Self.bodyLimits(routes: routes, maxRequestBodySize: maxRequestBodySize)
        )
    }

    private static func router(routes: [GatewayRoute], middleware: GatewayMiddleware) -> Router<GatewayRequestContext> {
        let router = Router(context: GatewayRequestContext.self, options: .autoGenerateHeadEndpoints)
        router.add(middleware: middleware)
        for route in routes {
            router.on(RouterPath(route.path), method: route.method, use: route.handler)
        }
        return router
    }

    /// The body limits of a list of routes: `maxRequestBodySize`, or a route's larger one.
    static func bodyLimits(routes: [GatewayRoute], maxRequestBodySize: Int) -> RequestBodyLimits {
        let byPath = Dictionary(routes.compactMap { route in route.maximumBodySize.map { (route.path, $0) } }, uniquingKeysWith: max)
        return RequestBodyLimits(standard: maxRequestBodySize, byPath: byPath)
    }
}
