import Hummingbird
import PushgateHTTP
import Logging
import PushgateStore

/// `GET /health` and `GET /metrics`.
struct OperationsRoutes: Sendable {
    let store: BoundedStore
    let metrics: GatewayMetrics
    /// How long the store may take to answer a health check.
    let healthDeadline: Duration

    var routes: [GatewayRoute] {
        [
            GatewayRoute(.get, "/health") { request, context in try await self.health(request, context: context) },
            GatewayRoute(.get, "/metrics") { _, _ in self.renderMetrics() },
        ]
    }

    /// 200 with an empty body (as Sygnal answers) when the store answers within the deadline and can
    /// write; 503 with a Matrix-shaped error otherwise.
    func health(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let store = self.store
        let deadline = self.healthDeadline
        let health = await withTaskGroup(of: StoreHealth.self) { group in
            group.addTask { await store.health() }
            group.addTask {
                try? await Task.sleep(for: deadline)
                return .unreachable(reason: "no answer within \(deadline)")
            }
            let first = await group.next() ?? .unreachable(reason: "no answer")
            group.cancelAll()
            return first
        }
        let message: String
        switch health {
        case .healthy:
            return Response(status: .ok)
        case .unreachable(let reason):
            context.logger.warning("health check: the store does not answer", metadata: ["error": "\(reason)"])
            message = "The store does not answer"
        case .notWritable(let reason):
            context.logger.warning("health check: the store cannot write", metadata: ["error": "\(reason)"])
            message = "The store cannot write"
        }
        return try GatewayErrorBody(status: .serviceUnavailable, errcode: "M_UNKNOWN", message: message).response(from: request, context: context)
    }

    static func metricsResponse(_ metrics: GatewayMetrics) -> Response {
        Response(
            status: .ok,
            headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: metrics.render()))
        )
    }

    func renderMetrics() -> Response {
        Self.metricsResponse(self.metrics)
    }
}
