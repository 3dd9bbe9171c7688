import PushgateConfig

/// Where `pushgate health` finds a gateway's `/health`: the configuration's first listener.
enum HealthURL {
    struct NoFixedPort: Error, CustomStringConvertible {
        var description: String { "http.port is 0 (a port picked at start): give --url" }
    }

    /// `http://<first bind address>:<port>/health`; a wildcard address is asked through loopback, an IPv6
    /// address goes in brackets.
    static func of(_ http: HTTPSettings) throws -> String {
        guard http.port != 0 else { throw NoFixedPort() }
        let address = http.bindAddresses.first ?? "127.0.0.1"
        let host: String
        switch address {
        case "0.0.0.0", "": host = "127.0.0.1"
        case "::", "[::]": host = "[::1]"
        default: host = address.contains(":") && !address.hasPrefix("[") ? "[\(address)]" : address
        }
        return "http://\(host):\(http.port)/health"
    }
}
