import Hummingbird
import PushgateHTTP

/// Answers the requests whose path is exactly one of the routes' fixed paths (no captures, no wildcards)
/// and whose method that route answers, as the router would: the same middleware around the same handler,
/// with the route's path recorded as the context's endpoint path. Everything else goes to `fallback`,
/// the router built from the same routes: other paths (including ones the router matches only after its
/// normalisation, such as a trailing `/`), HEAD (answered there by the GET route), 404 and 405.
///
/// The router's path lookup splits every path by `Character` and walks its trie: with the layers around
/// it, some 19,000 instructions of a Matrix notify request (benchmarks/README.md). Here it is one
/// dictionary lookup.
struct StaticRouteResponder<Fallback: HTTPResponder>: HTTPResponder where Fallback.Context == GatewayRequestContext {
    typealias Context = GatewayRequestContext

    /// Each fixed path's handlers by method, keyed by the path as the router records it (its `RouterPath`
    /// description).
    private let endpoints: [String: [HTTPRequest.Method: GatewayRoute.Handler]]
    private let middleware: GatewayMiddleware
    private let fallback: Fallback

    /// - Parameters:
    ///   - routes: the routes the fallback router was built from.
    ///   - middleware: the middleware the router runs around every route.
    ///   - fallback: the router's responder.
    init(routes: [GatewayRoute], middleware: GatewayMiddleware, fallback: Fallback) {
        var handlers: [String: [HTTPRequest.Method: [GatewayRoute.Handler]]] = [:]
        for route in routes {
            let path = RouterPath(route.path)
            // Only fixed paths: a capture or wildcard component is the router's to match.
            guard path.components.allSatisfy({ $0 == $0.description }) else { continue }
            handlers[path.description, default: [:]][route.method, default: []].append(route.handler)
        }
        // A path with a method given twice is left to the router, which decides which one answers.
        self.endpoints = handlers.filter { $0.value.values.allSatisfy { $0.count == 1 } }.mapValues { $0.compactMapValues(\.first) }
        self.middleware = middleware
        self.fallback = fallback
    }

    func respond(to request: Request, context: Context) async throws -> Response {
        let path = request.uri.path
        guard let handler = self.endpoints[path]?[request.method] else {
            return try await self.fallback.respond(to: request, context: context)
        }
        // A reference the router's middleware reads as well (for the access log's route): the path found
        // is the route's own.
        context.coreContext.endpointPath.value = path
        do {
            return try await self.middleware.handle(request, context: context, next: handler)
        } catch let error as any HTTPResponseError {
            // As the router turns an error that escapes its middleware into an answer.
            return try error.response(from: request, context: context)
        }
    }
}
