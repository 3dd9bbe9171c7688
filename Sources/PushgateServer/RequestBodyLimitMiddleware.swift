import Hummingbird
import PushgateHTTP

/// Answers 413 to a request whose declared length is over the limit, before any handler reads it, and
/// sets the limit that handlers apply while collecting bodies without a declared length.
struct RequestBodyLimitMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext

    /// The largest bodies accepted, in bytes.
    let limits: RequestBodyLimits

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let limit = self.limits.limit(forPath: request.uri.path)
        if let length = request.headers[.contentLength].flatMap(Int.init), length > limit {
            throw HTTPError(.contentTooLarge)
        }
        var context = context
        context.maxUploadSize = limit
        return try await next(request, context)
    }
}
