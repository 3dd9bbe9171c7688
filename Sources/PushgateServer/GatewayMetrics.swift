import Foundation
import PushgateCore
public import Prometheus

/// The gateway's Prometheus registry and the metrics every route shares.
///
/// - `pushgate_http_requests_total{route,method,code}`: requests answered.
/// - `pushgate_http_request_duration_seconds{route,method,code}`: time to answer.
///
/// Front ends and back ends register their own metrics (Sygnal's names among them) on ``registry``.
public final class GatewayMetrics: Sendable {
    /// The registry `/metrics` renders.
    public let registry: PrometheusCollectorRegistry
    /// The handles of each route, method and status seen, so a request costs no registry lookup.
    private let requestHandles = MemoTable<RequestLabels, RequestHandles>()

    private struct RequestLabels: Hashable, Sendable {
        var route: String
        var method: String
        var status: Int
    }

    private struct RequestHandles: Sendable {
        let count: Counter
        let duration: DurationHistogram
    }

    static let durationBuckets: [Duration] = [
        .microseconds(500), .milliseconds(1), .milliseconds(2.5), .milliseconds(5), .milliseconds(10), .milliseconds(25),
        .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2.5),
        .seconds(5), .seconds(10),
    ]

    /// Creates an empty registry.
    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
    }

    // MetricNameDescriptor is not Sendable, so these are computed rather than stored statics.
    static var requests: MetricNameDescriptor {
        MetricNameDescriptor(
            namespace: "pushgate", metricName: "http_requests", unitName: "total",
            helpText: "HTTP requests answered, by route, method and status code"
        )
    }
    static var requestDuration: MetricNameDescriptor {
        MetricNameDescriptor(
            namespace: "pushgate", metricName: "http_request_duration", unitName: "seconds",
            helpText: "Time to answer HTTP requests, by route, method and status code"
        )
    }

    /// Counts and times one answered request.
    func recordRequest(route: String, method: String, status: Int, duration: Duration) {
        let handles = self.requestHandles.value(for: RequestLabels(route: route, method: method, status: status)) {
            let labels = [("route", route), ("method", method), ("code", String(status))]
            return RequestHandles(
                count: self.registry.makeCounter(descriptor: Self.requests, labels: labels),
                duration: self.registry.makeDurationHistogram(descriptor: Self.requestDuration, labels: labels, buckets: Self.durationBuckets)
            )
        }
        handles.count.increment()
        handles.duration.record(duration)
    }

    /// The Prometheus text exposition of every registered metric.
    public func render() -> [UInt8] {
        self.registry.emitToBuffer()
    }
}
