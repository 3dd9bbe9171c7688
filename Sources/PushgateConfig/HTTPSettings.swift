import PushgateCore

/// The `http` section: where the gateway listens. Keys as Sygnal's, plus Pushgate's body limit, read
/// timeouts and connection cap.
public struct HTTPSettings: Sendable, Equatable {
    /// Addresses to listen on, one listener each (`http.bind_addresses`, default `['127.0.0.1']`).
    public var bindAddresses: [String] = ["127.0.0.1"]
    /// The port (`http.port`, default 5000; 0 picks a free port).
    public var port: Int = 5000
    /// Request bodies larger than this get 413 (`http.max_request_body_size`, bytes, default 1 MiB).
    public var maxRequestBodySize: Int = 1 << 20
    /// How long a new connection may take to send its first request's head (`http.header_timeout`,
    /// seconds, default 10); then it is closed.
    public var headerTimeout: Duration = .seconds(10)
    /// How long a request's body may take to arrive in full (`http.body_timeout`, seconds, default 30).
    public var bodyTimeout: Duration = .seconds(30)
    /// How long a keep-alive connection may wait for its next request's head (`http.idle_timeout`,
    /// seconds, default 60).
    public var idleTimeout: Duration = .seconds(60)
    /// The most connections open at once per listener (`http.max_connections`); further connections are
    /// answered 503 and closed. Nil chooses from the process's file-descriptor limit at start.
    public var maxConnections: Int?
    /// The threads that do the gateway's network I/O: its listeners and its connections to providers
    /// (`http.io_threads`). Nil takes one per core; the CPU-heavy steps run on compute threads of their
    /// own (``computeThreads``).
    public var ioThreads: Int?
    /// The threads that run the CPU-heavy steps: encryption, signature checks, reading large bodies
    /// (`http.compute_threads`). Nil takes half the cores, at least two (one on a single core), when
    /// `io_threads` is left at its default (one per core), else the cores the I/O threads leave, at least one.
    public var computeThreads: Int?

    /// The defaults.
    public init() {}

    static let knownKeys: Set<String> = [
        "bind_addresses", "port", "max_request_body_size", "header_timeout", "body_timeout", "idle_timeout", "max_connections",
        "io_threads", "compute_threads",
    ]

    init(_ section: ConfigSection) throws {
        if let addresses = try section.stringList("bind_addresses") {
            guard !addresses.isEmpty else {
                throw ConfigurationError(key: section.keyPath("bind_addresses"), "must name at least one address")
            }
            self.bindAddresses = addresses
        }
        self.port = try section.int("port", in: 0...65535) ?? self.port
        self.maxRequestBodySize = try section.int("max_request_body_size", in: 1...(1 << 30)) ?? self.maxRequestBodySize
        self.headerTimeout = .seconds(try section.int("header_timeout", in: 1...3600) ?? 10)
        self.bodyTimeout = .seconds(try section.int("body_timeout", in: 1...3600) ?? 30)
        self.idleTimeout = .seconds(try section.int("idle_timeout", in: 1...3600) ?? 60)
        self.maxConnections = try section.int("max_connections", in: 1...1_000_000)
        self.ioThreads = try section.int("io_threads", in: 1...1024)
        self.computeThreads = try section.int("compute_threads", in: 1...1024)
    }

    /// How many I/O threads to start on a machine with `cores` cores: `ioThreads` if set, else one per
    /// core (each request, and each outbox delivery, runs on one loop with that loop's provider
    /// connections, so loops do not hand work to one another).
    public func ioThreadCount(cores: Int) -> Int {
        self.ioThreads ?? max(1, cores)
    }

    /// How many compute threads to start on a machine with `cores` cores: `computeThreads` if set; else,
    /// with `ioThreads` set, the cores the I/O threads leave (at least one); else (a loop on every core)
    /// ``ComputePool/defaultThreadCount(cores:)``: half the cores, at least two (one on a single core), so
    /// that Web Push encryption and signature checks are not held to one core. (On 2 cores the second
    /// compute thread speeds Web Push and Nextcloud up and slows gorush's asynchronous answers a little:
    /// benchmarks/README.md, 2026-11-30, morning.)
    public func computeThreadCount(cores: Int) -> Int {
        if let computeThreads = self.computeThreads { return computeThreads }
        if let ioThreads = self.ioThreads { return max(1, cores - ioThreads) }
        return ComputePool.defaultThreadCount(cores: cores)
    }
}
