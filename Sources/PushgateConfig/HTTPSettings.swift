/// The `http` section: where the gateway listens. Keys as Sygnal's, plus Pushgate's body limit.
public struct HTTPSettings: Sendable, Equatable {
    /// Addresses to listen on, one listener each (`http.bind_addresses`, default `['127.0.0.1']`).
    public var bindAddresses: [String] = ["127.0.0.1"]
    /// The port (`http.port`, default 5000; 0 picks a free port).
    public var port: Int = 5000
    /// Request bodies larger than this get 413 (`http.max_request_body_size`, bytes, default 1 MiB).
    public var maxRequestBodySize: Int = 1 << 20

    /// The defaults.
    public init() {}

    static let knownKeys: Set<String> = ["bind_addresses", "port", "max_request_body_size"]

    init(_ section: ConfigSection) throws {
        if let addresses = try section.stringList("bind_addresses") {
            guard !addresses.isEmpty else {
                throw ConfigurationError(key: section.keyPath("bind_addresses"), "must name at least one address")
            }
            self.bindAddresses = addresses
        }
        self.port = try section.int("port", in: 0...65535) ?? self.port
        self.maxRequestBodySize = try section.int("max_request_body_size", in: 1...(1 << 30)) ?? self.maxRequestBodySize
    }
}
