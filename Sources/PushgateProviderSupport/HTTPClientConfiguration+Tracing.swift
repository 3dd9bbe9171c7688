public import AsyncHTTPClient

extension HTTPClient.Configuration {
    /// Drops AsyncHTTPClient's request spans when no tracer is bootstrapped (the gateway bootstraps none):
    /// for the no-op tracer it would still fill every request's span attributes, parsing the URL a second
    /// time, for nothing. A tracer a deployment does bootstrap is kept.
    public mutating func skipNoOpTracing() {
        if let tracer = self.tracing.tracer, String(reflecting: type(of: tracer)) == "Tracing.NoOpTracer" {
            self.tracing.tracer = nil
        }
    }
}
