@testable import PushgateMatrix
import Prometheus
import Testing

@Suite("Matrix metrics")
struct MatrixMetricsTests {
    static func text(_ registry: PrometheusCollectorRegistry) -> String {
        String(decoding: registry.emitToBuffer(), as: UTF8.self)
    }

    @Test func theInFlightGaugeCountsRequestsUpAndDown() {
        let registry = PrometheusCollectorRegistry()
        let metrics = MatrixMetrics(factory: PrometheusMetricsFactory(registry: registry))
        metrics.inFlight(1)
        metrics.inFlight(1)
        metrics.inFlight(1)
        #expect(Self.text(registry).contains(#"sygnal_requests_in_flight{resource="V1NotifyHandler"} 3"#))
        metrics.inFlight(-1)
        metrics.inFlight(-1)
        metrics.inFlight(-1)
        #expect(Self.text(registry).contains(#"sygnal_requests_in_flight{resource="V1NotifyHandler"} 0"#))
    }

    @Test func labelledCountersKeepCountingThroughTheirCachedHandles() {
        let registry = PrometheusCollectorRegistry()
        let metrics = MatrixMetrics(factory: PrometheusMetricsFactory(registry: registry))
        for _ in 0..<3 { metrics.dispatched(app: "im.a") }
        metrics.dispatched(app: "im.b")
        for _ in 0..<2 { metrics.answered(code: 200, duration: .milliseconds(3)) }
        metrics.answered(code: 502, duration: .milliseconds(3))
        metrics.notificationReceived(devices: 4)
        let text = Self.text(registry)
        #expect(text.contains(#"sygnal_per_pushkin_type_total{pushkin="im.a"} 3"#))
        #expect(text.contains(#"sygnal_per_pushkin_type_total{pushkin="im.b"} 1"#))
        #expect(text.contains(#"sygnal_pushgateway_status_codes_total{code="200"} 2"#))
        #expect(text.contains(#"sygnal_pushgateway_status_codes_total{code="502"} 1"#))
        #expect(text.contains("sygnal_notifications_received_total 1"))
        #expect(text.contains("sygnal_notifications_devices_received_total 4"))
    }
}
