import Hummingbird
import PushgateHTTP

/// The gateway's one middleware around every route, in one layer (as three layers it cost some 5,800
/// instructions a request more; benchmarks/README.md): it answers 413 to a request whose declared length is
/// over its path's limit before any handler reads it, and sets that limit for handlers collecting bodies
/// without a declared length; it turns every error into an answer in a known shape (``ErrorAnswers``);
/// and it counts, times and logs every answer (``AccessLog``).
struct GatewayMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext

    let accessLog: AccessLog
    let errors: ErrorAnswers
    /// The largest bodies accepted, in bytes.
    let limits: RequestBodyLimits

    func handle(_ request: Request, context: Context, next: @concurrent (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        var context = context
        let response: Response
        do {
            let limit = self.limits.limit(forPath: request.uri.path)
            if let length = request.headers.value(of: .contentLength).flatMap(Int.init), length > limit {
                throw HTTPError(.contentTooLarge)
            }
            context.maxUploadSize = limit
            response = try await next(request, context)
        } catch {
            do {
                response = try self.errors.response(to: error, request: request, context: context)
            } catch {
                // Only an answer that cannot be encoded ends here; the server answers 500.
                self.accessLog.record(request, context: context, status: 500, start: start)
                throw error
            }
        }
        self.accessLog.record(request, context: context, status: response.status.code, start: start)
        return response
    }
}
