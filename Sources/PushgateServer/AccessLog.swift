import Foundation
import HTTPTypes
import Hummingbird
import PushgateHTTP
import Logging
import NIOCore

/// Counts and times every request by route, method and status, and writes one access-log line per
/// request. The line names the route's path without its query string, which can carry credentials.
struct AccessLog: Sendable {
    let metrics: GatewayMetrics
    /// Take the client address from `X-Forwarded-For` (behind a reverse proxy).
    let usesForwardedFor: Bool

    /// Records one answered request that started at `start`.
    func record(_ request: Request, context: GatewayRequestContext, status: Int, start: ContinuousClock.Instant) {
        let elapsed = ContinuousClock.now - start
        let route = context.endpointPath ?? "NotFound"
        self.metrics.recordRequest(route: route, method: request.method.rawValue, status: status, duration: elapsed)
        let level: Logger.Level = route == "/health" || route == "/metrics" ? .debug : .info
        context.logger.log(
            level: level,
            "handled request",
            metadata: [
                "client": .string(self.client(request, context: context)),
                "method": .string(request.method.rawValue),
                "route": .string(route),
                "status": .string(String(status)),
                "ms": .string(AccessLogFields.milliseconds(microseconds: elapsed.wholeMicroseconds)),
            ]
        )
    }

    private func client(_ request: Request, context: GatewayRequestContext) -> String {
        if self.usesForwardedFor, let forwarded = request.headers[.xForwardedFor]?.split(separator: ",").first {
            return forwarded.trimmingCharacters(in: .whitespaces)
        }
        return AccessLogFields.client(context.remoteAddress)
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
