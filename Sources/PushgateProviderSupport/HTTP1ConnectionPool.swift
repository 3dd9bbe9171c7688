public import Foundation
public import NIOCore
public import NIOHTTP1
import NIOPosix
public import NIOSSL
import Synchronization
import PushgateCore

/// Keep-alive HTTP/1.1 connections to the servers provider requests go to (push services, a Nextcloud
/// server's identity proof), kept per origin (scheme, host, port) between requests: TCP (through the
/// proxy's CONNECT tunnel when there is one), TLS for `https`, and ``HTTP1ExchangeHandler``, which writes
/// requests and reads answers itself. A message takes an idle connection of its origin or opens one; after
/// a complete keep-alive answer the connection goes back (at most `maximumIdlePerOrigin` are kept, each
/// closed after `idleTimeout`). How many messages are out at once is the provider's `ConcurrencyGate`.
public final class HTTP1ConnectionPool: Sendable {
    /// Where connections go.
    /// The most bytes of an answer's body kept unless a pool says otherwise (error bodies of push
    /// services are short).
    public static let defaultBodyLimit = 2048

    public struct Origin: Hashable, Sendable {
        public var isTLS: Bool
        public var host: String
        public var port: Int

        /// The origin of an `http` or `https` URL with a host; nil for any other, and for a port outside
        /// 1…65535 (Foundation reads any run of digits as a port, and a socket address made from a larger
        /// one traps).
        public init?(_ url: URL) {
            guard let scheme = url.scheme?.lowercased(), scheme == "https" || scheme == "http", let host = url.host, !host.isEmpty else {
                return nil
            }
            if let port = url.port, !TCPPort.connectable.contains(port) { return nil }
            let isTLS = scheme == "https"
            // An IPv6 literal comes in brackets in URLs, without them in sockets.
            self.init(
                isTLS: isTLS, host: host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host,
                port: url.port ?? (isTLS ? 443 : 80)
            )
        }

        /// An origin from its parts (`host` without brackets).
        init(isTLS: Bool, host: String, port: Int) {
            self.isTLS = isTLS
            self.host = host
            self.port = port
        }

        /// The `Host` header: the host (IPv6 in brackets) and the port when not the scheme's default.
        public var hostHeader: String {
            let host = self.host.utf8.contains(UInt8(ascii: ":")) ? "[\(self.host)]" : self.host
            return self.port == (self.isTLS ? 443 : 80) ? host : "\(host):\(self.port)"
        }

        /// The TLS server name: the host, unless it is an IP address (verified against the address then).
        public var serverName: String? { IPAddress.tlsServerName(forHost: self.host) }
    }

    /// A URL as the pool uses it: the origin connections go to, the `Host` header and the request target.
    public struct Destination: Sendable {
        public let origin: Origin
        public let hostHeader: String
        public let target: String
        /// The request line after the method, and the `Host` header, as sent; nil when the target cannot
        /// be sent (whitespace or control bytes), which a request to it is then refused for.
        let afterMethod: [UInt8]?

        /// Reads `url`; nil unless it is an `http` or `https` URL with a host.
        public init?(_ url: URL) {
            guard let origin = Origin(url) else { return nil }
            self.init(origin: origin, target: HTTP1ConnectionPool.target(of: url))
        }

        /// A destination from an origin and a request target read elsewhere (``PushEndpoint/init(text:)``).
        init(origin: Origin, target: String) {
            self.origin = origin
            self.hostHeader = origin.hostHeader
            self.target = target
            self.afterMethod = HTTP1RequestSerializer.afterMethod(target: target, host: self.hostHeader)
        }
    }

    /// One open connection.
    private final class Connection: Sendable {
        let channel: any Channel
        let handler: NIOLoopBound<HTTP1ExchangeHandler>

        init(channel: any Channel, handler: HTTP1ExchangeHandler) {
            self.channel = channel
            self.handler = NIOLoopBound(handler, eventLoop: channel.eventLoop)
        }
    }

    /// An idle connection and since when it has been idle.
    private struct Idle {
        let connection: Connection
        let since: NIODeadline
    }

    private struct State {
        /// Per origin, oldest first.
        var idle: [Origin: [Idle]] = [:]
        /// The idle connections of every origin together.
        var idleCount = 0
        var isShutDown = false
        /// The one timer that closes connections idle for `idleTimeout` (instead of a timer per idle spell:
        /// setting and cancelling one per request was 3 % of a delivery's instructions).
        var sweep: Scheduled<Void>?
    }

    /// The TLS context of pools that verify servers against the system's trust store, announcing HTTP/1.1
    /// (ALPN): made once, when the first such pool opens an `https` connection, and shared by all. Each
    /// context parses the whole trust store (about half a megabyte of certificates in memory), and a
    /// context may serve any number of connections at once.
    private static let systemTrustTLS: Result<NIOSSLContext, any Error> = Result {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.applicationProtocols = ["http/1.1"]
        return try NIOSSLContext(configuration: configuration)
    }

    /// The TLS context for `https` origins, or why there is none (no usable trust store, say); nil for
    /// the shared ``systemTrustTLS``.
    private let tls: Result<NIOSSLContext, any Error>?
    private let proxy: OutboundProxy?
    private let connectTimeout: TimeAmount
    private let idleTimeout: TimeAmount
    private let maximumIdlePerOrigin: Int
    /// The most idle connections kept for all origins together: endpoints name any number of origins
    /// (UnifiedPush servers, or one host on many ports), and each kept connection holds a descriptor.
    private let maximumIdle: Int
    private let bodyLimit: Int
    private let cancellationGrace: TimeAmount
    private let events: ProviderConnectionEvents
    private let state = Mutex(State())

    /// Creates a pool.
    /// - Parameters:
    ///   - tls: the client TLS context for `https` origins (an error is reported per request); by default
    ///     one shared context that verifies against the system's trust store.
    ///   - proxy: the CONNECT proxy requests tunnel through, if any.
    ///   - connectTimeout: the longest a connection may take to open.
    ///   - idleTimeout: how long an idle connection is kept.
    ///   - maximumIdlePerOrigin: the most idle connections kept per origin.
    ///   - maximumIdle: the most idle connections kept for all origins together (past it, a connection is
    ///     closed after its answer).
    ///   - bodyLimit: the most bytes of an answer's body kept (the rest is read and dropped).
    ///   - cancellationGrace: when the task waiting for an answer is cancelled, the request's deadline
    ///     moves to at most this far off: an answer already on its way is still read (and taken, as a
    ///     destructive read's must be), and a server that never answers holds the task up no longer.
    ///   - events: told of each connection opened and closed (an app's connection metrics).
    public init(
        tls: Result<NIOSSLContext, any Error>? = nil, proxy: OutboundProxy?, connectTimeout: TimeAmount, idleTimeout: TimeAmount,
        maximumIdlePerOrigin: Int, maximumIdle: Int = 1_024, bodyLimit: Int = HTTP1ConnectionPool.defaultBodyLimit, cancellationGrace: TimeAmount = .seconds(5),
        events: ProviderConnectionEvents = ProviderConnectionEvents()
    ) {
        self.events = events
        self.bodyLimit = bodyLimit
        self.cancellationGrace = cancellationGrace
        self.tls = tls
        self.proxy = proxy
        self.connectTimeout = connectTimeout
        self.idleTimeout = idleTimeout
        self.maximumIdlePerOrigin = maximumIdlePerOrigin
        self.maximumIdle = maximumIdle
    }

    /// Sends one request and returns the answer.
    /// - Parameters:
    ///   - method: the request method.
    ///   - url: the `http` or `https` URL.
    ///   - addresses: the addresses a policy checked for the URL's host: a new connection goes to the first,
    ///     never to a second lookup's answer (so a name cannot be checked as one address and reached at
    ///     another); empty to resolve the host when connecting.
    ///   - headers: the request headers (`Host` and `Content-Length` are the pool's: headers of those names
    ///     are left out).
    ///   - body: the request body.
    ///   - deadline: when to give up (the connection is then closed).
    /// - Throws: ``HTTP1ExchangeError`` or the connection's error.
    public func request(
        _ method: HTTPMethod = .POST, _ url: URL, at addresses: [IPAddress] = [], headers: HTTPHeaders, body: ByteBuffer = ByteBuffer(),
        deadline: NIODeadline
    ) async throws -> HTTP1Answer {
        guard let destination = Destination(url) else { throw HTTP1ExchangeError.refused("the endpoint is not an http(s) URL") }
        return try await self.request(method, to: destination, at: addresses, headers: headers, body: body, deadline: deadline)
    }

    /// Sends one request to a destination read once from its URL (for a provider that posts to one URL
    /// again and again); otherwise as ``request(_:_:at:headers:body:deadline:)``.
    public func request(
        _ method: HTTPMethod = .POST, to destination: Destination, at addresses: [IPAddress] = [], headers: HTTPHeaders,
        body: ByteBuffer = ByteBuffer(), deadline: NIODeadline
    ) async throws -> HTTP1Answer {
        try await self.request(method, to: destination, at: addresses, headers: try HTTP1HeaderLines(headers), body: body, deadline: deadline)
    }

    /// Sends one request with headers checked beforehand (for a back end that sends the same headers
    /// with many messages); otherwise as ``request(_:_:at:headers:body:deadline:)``.
    public func request(
        _ method: HTTPMethod = .POST, to destination: Destination, at addresses: [IPAddress] = [], headers: HTTP1HeaderLines,
        body: ByteBuffer = ByteBuffer(), deadline: NIODeadline
    ) async throws -> HTTP1Answer {
        guard let bytes = HTTP1RequestSerializer.serialize(method, to: destination, headers: headers, body: body, allocator: Self.allocator) else {
            throw HTTP1ExchangeError.refused("the request target holds whitespace or control bytes")
        }
        let origin = destination.origin
        // A caller that gave up sends nothing (a destructive poll's messages would be taken and dropped).
        try Task.checkCancellation()
        // An idle connection the server has closed meanwhile takes nothing; then a new one is opened. So
        // does one the server closed as the request went out, before a byte of an answer: servers close
        // connections idle for their own keep-alive time (5 s for some), and their close can cross a
        // request on its way. The request goes once more, on a new connection (as browsers resend on a
        // reused connection that ends unanswered); any other loss is the caller's to retry.
        if let idle = self.takeIdle(origin) {
            do {
                return try await self.exchange(on: idle, origin: origin, request: bytes, deadline: deadline)
            } catch HTTP1ExchangeError.notSent {
            } catch let closed as HTTP1ClosedUnanswered {
                guard NIODeadline.now() < deadline, !Task.isCancelled else { throw HTTP1ExchangeError.connectionLost(closed.why) }
            }
        }
        let connection: Connection
        do {
            connection = try await self.connect(origin, at: addresses, deadline: deadline).get()
        } catch {
            // A connection cut short by the request's deadline (the connect timeout is at most the time left) failed by it.
            if NIODeadline.now() >= deadline { throw HTTP1ExchangeError.deadlineExceeded }
            throw error
        }
        // The connect does not hear a cancellation: a caller that gave up meanwhile sends nothing, and the
        // new connection waits for the next request.
        if Task.isCancelled {
            self.giveBack(connection, origin: origin)
            throw CancellationError()
        }
        do {
            return try await self.exchange(on: connection, origin: origin, request: bytes, deadline: deadline)
        } catch let closed as HTTP1ClosedUnanswered {
            throw HTTP1ExchangeError.connectionLost(closed.why)
        }
    }

    /// Where requests' bytes are written (the allocator every channel uses).
    private static let allocator = ByteBufferAllocator()

    private func exchange(on connection: Connection, origin: Origin, request: ByteBuffer, deadline: NIODeadline) async throws -> HTTP1Answer {
        let loop = connection.channel.eventLoop
        let promise = loop.makePromise(of: HTTP1Answer.self)
        loop.executeNowIfHere { connection.handler.value.send(request, deadline: deadline, promise: promise) }
        let answer: HTTP1Answer
        do {
            answer = try await withTaskCancellationHandler {
                try await promise.futureResult.get()
            } onCancel: {
                let deadline = NIODeadline.now() + self.cancellationGrace
                // Only this request's exchange: by the time this runs, its answer may be in and the
                // connection carrying another request.
                connection.channel.eventLoop.execute { connection.handler.value.shortenDeadline(to: deadline, of: promise.futureResult) }
            }
        } catch let error as HTTP1ExchangeError where error.isRefusal {
            // Nothing was written: the connection is as good as before.
            self.giveBack(connection, origin: origin)
            throw error
        } catch {
            connection.channel.close(promise: nil)
            throw error
        }
        if answer.connectionReusable {
            self.giveBack(connection, origin: origin)
        } else {
            connection.channel.close(promise: nil)
        }
        return answer
    }

    /// Closes every idle connection; later messages fail.
    public func shutdown() async {
        let idle = self.state.withLock { state -> [Connection] in
            state.isShutDown = true
            state.sweep?.cancel()
            state.sweep = nil
            defer {
                state.idle = [:]
                state.idleCount = 0
            }
            return state.idle.values.flatMap { $0.map(\.connection) }
        }
        for connection in idle { try? await connection.channel.close() }
    }

    /// The request target: the endpoint's path (percent-encoded as given; `/` when empty) and query.
    public static func target(of url: URL) -> String {
        let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        var target = components?.percentEncodedPath ?? ""
        if target.isEmpty { target = "/" }
        if let query = components?.percentEncodedQuery { target += "?" + query }
        return target
    }

    /// The most recently used idle connection of `origin` that is still open and not past its idle time:
    /// of those on the event loop the caller runs on, if any (so that a request whose task runs on a loop
    /// does not cross threads to a connection of another loop and back), else of all.
    private func takeIdle(_ origin: Origin) -> Connection? {
        let now = NIODeadline.now()
        let current = MultiThreadedEventLoopGroup.currentEventLoop
        while let idle = self.state.withLock({ state -> Idle? in
            let index: Int
            do {
                guard let list = state.idle[origin], !list.isEmpty else { return nil }
                index = current.flatMap { loop in list.lastIndex { $0.connection.channel.eventLoop === loop } } ?? list.count - 1
            }
            // The emptied list stays (its storage takes the connection back); the sweep drops empty lists.
            state.idleCount -= 1
            return state.idle[origin]?.remove(at: index)
        }) {
            if idle.connection.channel.isActive, now - idle.since < self.idleTimeout { return idle.connection }
            idle.connection.channel.close(promise: nil)
        }
        return nil
    }

    private func giveBack(_ connection: Connection, origin: Origin) {
        let now = NIODeadline.now()
        let kept = self.state.withLock { state -> Bool in
            guard !state.isShutDown, (state.idle[origin]?.count ?? 0) < self.maximumIdlePerOrigin, state.idleCount < self.maximumIdle
            else { return false }
            state.idle[origin, default: []].append(Idle(connection: connection, since: now))
            state.idleCount += 1
            if state.sweep == nil { state.sweep = self.scheduleSweep(at: now + self.idleTimeout, on: connection.channel.eventLoop) }
            return true
        }
        if !kept { connection.channel.close(promise: nil) }
    }

    /// Schedules ``sweepIdle(on:)`` (called under the state lock).
    private func scheduleSweep(at deadline: NIODeadline, on eventLoop: any EventLoop) -> Scheduled<Void> {
        eventLoop.scheduleTask(deadline: deadline) { self.sweepIdle(on: eventLoop) }
    }

    /// Closes the connections idle for `idleTimeout` or longer, and schedules the next sweep for the oldest
    /// of the others, if any.
    private func sweepIdle(on eventLoop: any EventLoop) {
        let now = NIODeadline.now()
        let expired = self.state.withLock { state -> [Connection] in
            var expired: [Connection] = []
            var oldest: NIODeadline?
            for origin in Array(state.idle.keys) {
                guard var list = state.idle[origin] else { continue }
                let stale = list.prefix { now - $0.since >= self.idleTimeout }
                expired.append(contentsOf: stale.map(\.connection))
                state.idleCount -= stale.count
                list.removeFirst(stale.count)
                if let first = list.first { oldest = min(oldest ?? first.since, first.since) }
                state.idle[origin] = list.isEmpty ? nil : list
            }
            state.sweep = oldest.map { self.scheduleSweep(at: $0 + self.idleTimeout, on: eventLoop) }
            return expired
        }
        for connection in expired { connection.channel.close(promise: nil) }
    }

    /// Forgets `connection` once its channel has closed.
    private func forget(_ connection: Connection, origin: Origin) {
        self.state.withLock { state in
            guard let index = state.idle[origin]?.firstIndex(where: { $0.connection === connection }) else { return }
            state.idle[origin]?.remove(at: index)
            state.idleCount -= 1
            if state.idle[origin]?.isEmpty == true { state.idle[origin] = nil }
        }
    }

    private func connect(_ origin: Origin, at addresses: [IPAddress], deadline: NIODeadline) -> EventLoopFuture<Connection> {
        guard !self.state.withLock({ $0.isShutDown }) else {
            return MultiThreadedEventLoopGroup.singleton.next().makeFailedFuture(HTTP1ExchangeError.shutDown)
        }
        let timeout = min(self.connectTimeout, max(.milliseconds(1), deadline - .now()))
        // One deadline for the TCP connect and the proxy's CONNECT together.
        let connectDeadline = NIODeadline.now() + timeout
        // On the caller's event loop when it runs on one, where its later requests will look first.
        let bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.currentEventLoop ?? MultiThreadedEventLoopGroup.singleton.next())
            .connectTimeout(timeout)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .outboundKeepalive()
        let connected: EventLoopFuture<any Channel>
        if let proxy = self.proxy {
            // To the checked address too, so the proxy does not look the name up again (its answer could
            // differ: DNS rebinding); the name stays in `Host` and, for https, in the TLS server name.
            let target = addresses.first.map { address -> String in
                if case .v6 = address { return "[\(address)]" }
                return address.description
            } ?? origin.host
            connected = bootstrap.connect(host: proxy.host, port: proxy.port).flatMap { channel in
                OutboundProxyTunnel.open(on: channel, to: target, port: origin.port, through: proxy, deadline: connectDeadline).map { channel }
            }
        } else if let pinned = addresses.lazy.compactMap({ try? SocketAddress(ipAddress: $0.description, port: origin.port) }).first {
            // The checked address, not a second lookup that could answer differently.
            connected = bootstrap.connect(to: pinned)
        } else {
            connected = bootstrap.connect(host: origin.host, port: origin.port)
        }
        // For `https` only, and here rather than on the event loop: the shared context's first use reads the
        // trust store.
        let tls = origin.isTLS ? self.tls ?? Self.systemTrustTLS : nil
        return connected.flatMapThrowing { channel in
            let pipeline = channel.pipeline.syncOperations
            if let tls {
                do {
                    try pipeline.addHandler(NIOSSLClientHandler(context: tls.get(), serverHostname: origin.serverName))
                } catch {
                    channel.close(promise: nil)
                    throw error
                }
            }
            let handler = HTTP1ExchangeHandler(bodyLimit: self.bodyLimit)
            try pipeline.addHandler(handler)
            let connection = Connection(channel: channel, handler: handler)
            self.events.opened()
            channel.closeFuture.whenComplete { _ in
                self.events.closed()
                self.forget(connection, origin: origin)
            }
            return connection
        }
    }
}
