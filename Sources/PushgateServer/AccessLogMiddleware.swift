import Foundation
import HTTPTypes
import Hummingbird
import PushgateHTTP
import Logging
import NIOCore

/// Counts and times every request by route, method and status, and writes one access-log line per
/// request. The line names the route's path without its query string, which can carry credentials.
struct AccessLogMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext

    let metrics: GatewayMetrics
    /// Take the client address from `X-Forwarded-For` (behind a reverse proxy).
    let usesForwardedFor: Bool

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        let response: Response
        do {
            response = try await next(request, context)
        } catch {
            // The error middleware answers everything; this only guards against a framework error escaping it.
            self.record(request, context: context, status: (error as? any HTTPResponseError)?.status.code ?? 500, start: start)
            throw error
        }
        self.record(request, context: context, status: response.status.code, start: start)
        return response
    }

    private func record(_ request: Request, context: Context, status: Int, start: ContinuousClock.Instant) {
        let elapsed = ContinuousClock.now - start
        let route = context.endpointPath ?? "NotFound"
        self.metrics.recordRequest(route: route, method: request.method.rawValue, status: status, duration: elapsed)
        let level: Logger.Level = route == "/health" || route == "/metrics" ? .debug : .info
        context.logger.log(
            level: level,
            "handled request",
            metadata: [
                "client": "\(self.client(request, context: context))",
                "method": "\(request.method.rawValue)",
                "route": "\(route)",
                "status": "\(status)",
                "ms": "\(Double(elapsed.wholeMicroseconds) / 1000)",
            ]
        )
    }

    private func client(_ request: Request, context: Context) -> String {
        if self.usesForwardedFor, let forwarded = request.headers[.xForwardedFor]?.split(separator: ",").first {
            return forwarded.trimmingCharacters(in: .whitespaces)
        }
        return context.remoteAddress?.ipAddress ?? "-"
    }
}

extension HTTPField.Name {
    static let xForwardedFor = HTTPField.Name("X-Forwarded-For")!
}

extension Duration {
    var wholeMicroseconds: Int64 {
        let (seconds, attoseconds) = self.components
        return seconds * 1_000_000 + attoseconds / 1_000_000_000_000
    }
}
