import Hummingbird
import PushgateHTTP
import Logging
import PushgateStore

/// `GET /health` and `GET /metrics`.
struct OperationsRoutes: Sendable {
    let store: any PushStore
    let metrics: GatewayMetrics
    /// How long the store may take to answer a health check.
    let healthDeadline: Duration

    var routes: [GatewayRoute] {
        [
            GatewayRoute(.get, "/health") { _, context in await self.health(context: context) },
            GatewayRoute(.get, "/metrics") { _, _ in self.renderMetrics() },
        ]
    }

    /// 200 with an empty body when the store answers within the deadline (as Sygnal answers), 503 otherwise.
    func health(context: GatewayRequestContext) async -> Response {
        let store = self.store
        let deadline = self.healthDeadline
        let healthy = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                do {
                    try await store.ping()
                    return true
                } catch {
                    context.logger.warning("health check: the store did not answer", metadata: ["error": "\(error)"])
                    return false
                }
            }
            group.addTask {
                try? await Task.sleep(for: deadline)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
        return Response(status: healthy ? .ok : .serviceUnavailable)
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
