import Prometheus
import PushgateProviderSupport
import Testing

/// `pushgate_provider_connections{app}` counts every open connection of the app, also while a reload
/// drains its retired back end beside the new one (each with events of its own).
@Suite struct ProviderConnectionEventsTests {
    @Test func twoGenerationsOfAnAppCountInOneSeries() {
        let registry = PrometheusCollectorRegistry()
        let factory = PrometheusMetricsFactory(registry: registry)
        func open() -> String? {
            String(decoding: registry.emitToBuffer(), as: UTF8.self).split(separator: "\n")
                .first { $0.hasPrefix(#"pushgate_provider_connections{app="a"} "#) }.map { String($0.split(separator: " ").last ?? "") }
        }
        let retired = ProviderConnectionEvents(appID: "a", factory: factory)
        retired.opened()
        retired.opened()
        #expect(open() == "2.0" || open() == "2")
        // The reload's new back end starts: the retired one's connections are still open.
        let current = ProviderConnectionEvents(appID: "a", factory: factory)
        #expect(open() == "2.0" || open() == "2")
        current.opened()
        retired.closed()
        retired.closed()
        #expect(open() == "1.0" || open() == "1", "the new back end's one connection")
    }
}
