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
        guard context.logger.logLevel <= level else { return }
        // Room for the logger's own metadata (the request id), which the handler adds, and for a JSON line's
        // own four members.
        var fields: [GatewayLogHandler.Field] = []
        fields.reserveCapacity(10)
        fields.append(GatewayLogHandler.Field(key: "client", value: .string(self.client(request, context: context))))
        fields.append(GatewayLogHandler.Field(key: "method", value: .string(request.method.rawValue)))
        fields.append(GatewayLogHandler.Field(key: "route", value: .string(route)))
        fields.append(GatewayLogHandler.Field(key: "status", value: .string(String(status))))
        fields.append(GatewayLogHandler.Field(key: "ms", value: .string(AccessLogFields.milliseconds(microseconds: elapsed.wholeMicroseconds))))
        // The gateway's own handler takes the fields as they are; another (a test's) gets them as metadata.
        if let handler = context.logger.handler as? GatewayLogHandler {
            handler.log(level: level, Self.message, fields: fields)
        } else {
            var metadata = Logger.Metadata()
            for field in fields { metadata[field.key] = field.value }
            context.logger.log(level: level, Self.message, metadata: metadata)
        }
    }

    /// The access log's message.
    static let message: Logger.Message = "handled request"

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
