import HTTPTypes
import PushgateHTTP

/// The methods each route path answers, for 405 and its `Allow` header, found for a request path the way
/// the router finds its route: a trailing `/` names the same route, and a route ending in `/**` answers
/// every path below it. HEAD is listed wherever GET is (the router answers it there).
struct RouteMethods: Sendable {
    private let exact: [String: [HTTPRequest.Method]]
    /// `/**` routes: the path they answer below (with its trailing `/`), and their methods.
    private let below: [(prefix: String, methods: [HTTPRequest.Method])]

    init(routes: [GatewayRoute]) {
        func withHead(_ methods: [HTTPRequest.Method]) -> [HTTPRequest.Method] {
            methods.contains(.get) && !methods.contains(.head) ? methods + [.head] : methods
        }
        let wildcard = "/**"
        self.exact = Dictionary(grouping: routes.filter { !$0.path.hasSuffix(wildcard) }, by: \.path).mapValues { withHead($0.map(\.method)) }
        self.below = Dictionary(grouping: routes.filter { $0.path.hasSuffix(wildcard) }, by: { String($0.path.dropLast(2)) })
            .map { (prefix: $0.key, methods: withHead($0.value.map(\.method))) }
            .sorted { $0.prefix.count > $1.prefix.count }
    }

    /// The methods the route found for `path` answers; nil when no route answers the path.
    func methods(forPath path: String) -> [HTTPRequest.Method]? {
        if let methods = self.exact[path] { return methods }
        if path.count > 1, path.hasSuffix("/"), let methods = self.exact[String(path.dropLast())] { return methods }
        return self.below.first { path.hasPrefix($0.prefix) && path.count > $0.prefix.count }?.methods
    }
}
