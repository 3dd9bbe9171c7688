import ServiceLifecycle

/// A listener whose failure (its address in use, a host name that does not resolve) names the listener,
/// its address and the settings that chose them, instead of only the system's error.
struct NamedListener: Service {
    let server: any Service
    /// `http` or `metrics`.
    let name: String
    let host: String
    let port: Int

    func run() async throws {
        do {
            try await self.server.run()
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw ListenerError(name: self.name, host: self.host, port: self.port, underlying: "\(error)")
        }
    }
}

/// Why a listener stopped (it could not bind, or failed later): which one, where, and the system's reason.
public struct ListenerError: Error, CustomStringConvertible {
    let name: String
    let host: String
    let port: Int
    let underlying: String

    public var description: String {
        let settings = self.name == "metrics" ? "metrics.prometheus.address and port" : "http.bind_addresses and http.port"
        return "the \(self.name) listener cannot serve on \(self.host):\(self.port) (\(settings)): \(self.underlying)"
    }
}
