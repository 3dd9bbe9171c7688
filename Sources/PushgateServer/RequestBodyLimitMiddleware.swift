import Hummingbird
import PushgateHTTP

/// Answers 413 to a request whose declared length is over the limit, before any handler reads it, and
/// sets the limit that handlers apply while collecting bodies without a declared length.
struct RequestBodyLimitMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext

    /// The largest body accepted, in bytes.
    let limit: Int
    /// Larger limits of single paths (routes that declare one).
    let limitsByPath: [String: Int]

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let limit = self.limitsByPath[request.uri.path].map { max($0, self.limit) } ?? self.limit
        if let length = request.headers[.contentLength].flatMap(Int.init), length > limit {
            throw HTTPError(.contentTooLarge)
        }
        var context = context
        context.maxUploadSize = limit
        return try await next(request, context)
    }
}
