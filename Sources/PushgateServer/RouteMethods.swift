import HTTPTypes
import PushgateHTTP

/// The methods each route path answers, for 405 and its `Allow` header, found for a request path the way
/// the router finds its route: a trailing `/` names the same route, and a route ending in `/**` answers
/// every path below it. HEAD is listed wherever GET is (the router answers it there).
struct RouteMethods: Sendable {
    /// One route's method, and whether it answers now (nil: always).
    private struct Method: Sendable {
        let method: HTTPRequest.Method
        let isAnswering: (@Sendable () -> Bool)?
    }

    private let exact: [String: [Method]]
    /// `/**` routes: the path they answer below (with its trailing `/`), and their methods.
    private let below: [(prefix: String, methods: [Method])]
    /// Each exact path's error shape, when its routes have one.
    private let errorAnswers: [String: GatewayRoute.ErrorAnswer]

    init(routes: [GatewayRoute]) {
        func methods(_ routes: [GatewayRoute]) -> [Method] {
            var methods = routes.map { Method(method: $0.method, isAnswering: $0.isAnswering) }
            if let get = methods.first(where: { $0.method == .get }), !methods.contains(where: { $0.method == .head }) {
                methods.append(Method(method: .head, isAnswering: get.isAnswering))
            }
            return methods
        }
        let wildcard = "/**"
        self.exact = Dictionary(grouping: routes.filter { !$0.path.hasSuffix(wildcard) }, by: \.path).mapValues(methods)
        self.below = Dictionary(grouping: routes.filter { $0.path.hasSuffix(wildcard) }, by: { String($0.path.dropLast(2)) })
            .map { (prefix: $0.key, methods: methods($0.value)) }
            .sorted { $0.prefix.count > $1.prefix.count }
        var errorAnswers: [String: GatewayRoute.ErrorAnswer] = [:]
        for route in routes where !route.path.hasSuffix(wildcard) {
            if let answer = route.errorAnswer, errorAnswers[route.path] == nil { errorAnswers[route.path] = answer }
        }
        self.errorAnswers = errorAnswers
    }

    /// How the gateway's refusals of a request to `path` are shaped; nil for the Matrix shape.
    func errorAnswer(forPath path: String) -> GatewayRoute.ErrorAnswer? {
        guard !self.errorAnswers.isEmpty else { return nil }
        return Self.lookUp(path, in: self.errorAnswers)
    }

    /// `path`'s entry in `table`, or, for a path with a trailing slash, the entry of the path without it.
    private static func lookUp<Value>(_ path: String, in table: [String: Value]) -> Value? {
        if let value = table[path] { return value }
        if path.count > 1, path.hasSuffix("/") { return table[String(path.dropLast())] }
        return nil
    }

    /// The methods the route found for `path` answers now; nil when no route answers the path.
    func methods(forPath path: String) -> [HTTPRequest.Method]? {
        let found: [Method]? =
            Self.lookUp(path, in: self.exact) ?? self.below.first { path.hasPrefix($0.prefix) && path.count > $0.prefix.count }?.methods
        return found?.filter { $0.isAnswering?() ?? true }.map(\.method)
    }
}
