import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import PushgateProviderSupport
import Synchronization

/// Keep-alive HTTP/1.1 connections to push services, kept per origin (scheme, host, port) between
/// messages: TCP (through the proxy's CONNECT tunnel when there is one), TLS for `https`, NIO's HTTP/1
/// codec and ``WebPushHTTP1Handler``. A message takes an idle connection of its origin or opens one; after
/// a complete keep-alive answer the connection goes back (at most `maximumIdlePerOrigin` are kept, each
/// closed after `idleTimeout`). How many messages are out at once is the provider's `ConcurrencyGate`.
final class WebPushConnectionPool: Sendable {
    /// Where connections go.
    struct Origin: Hashable, Sendable {
        var isTLS: Bool
        var host: String
        var port: Int

        init?(_ url: URL) {
            guard let scheme = url.scheme?.lowercased(), scheme == "https" || scheme == "http", let host = url.host, !host.isEmpty else {
                return nil
            }
            self.isTLS = scheme == "https"
            // An IPv6 literal comes in brackets in URLs, without them in sockets.
            self.host = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
            self.port = url.port ?? (self.isTLS ? 443 : 80)
        }

        /// The `Host` header: the host (IPv6 in brackets) and the port when not the scheme's default.
        var hostHeader: String {
            let host = self.host.contains(":") ? "[\(self.host)]" : self.host
            return self.port == (self.isTLS ? 443 : 80) ? host : "\(host):\(self.port)"
        }

        /// The TLS server name: the host, unless it is an IP address (verified against the address then).
        var serverName: String? { IPAddress.tlsServerName(forHost: self.host) }
    }

    /// One open connection.
    private final class Connection: Sendable {
        let channel: any Channel
        let handler: NIOLoopBound<WebPushHTTP1Handler>
        /// Closes the connection once it has been idle too long; cancelled when it is taken again.
        let idleClose = Mutex<Scheduled<Void>?>(nil)

        init(channel: any Channel, handler: WebPushHTTP1Handler) {
            self.channel = channel
            self.handler = NIOLoopBound(handler, eventLoop: channel.eventLoop)
        }
    }

    private struct State {
        var idle: [Origin: [Connection]] = [:]
        var isShutDown = false
    }

    /// The TLS context for `https` origins, or why there is none (no usable trust store, say).
    private let tls: Result<NIOSSLContext, any Error>
    private let proxy: OutboundProxy?
    private let connectTimeout: TimeAmount
    private let idleTimeout: TimeAmount
    private let maximumIdlePerOrigin: Int
    private let state = Mutex(State())

    init(tls: Result<NIOSSLContext, any Error>, proxy: OutboundProxy?, connectTimeout: TimeAmount, idleTimeout: TimeAmount, maximumIdlePerOrigin: Int) {
        self.tls = tls
        self.proxy = proxy
        self.connectTimeout = connectTimeout
        self.idleTimeout = idleTimeout
        self.maximumIdlePerOrigin = maximumIdlePerOrigin
    }

    /// Posts `body` to `url` with `headers` (plus `Host` and `Content-Length`), answering before `deadline`.
    /// - Parameter addresses: where a new connection goes (the first of them), the host's addresses
    ///   as the endpoint policy checked them; empty to connect by name.
    func post(_ url: URL, at addresses: [IPAddress] = [], headers: HTTPHeaders, body: ByteBuffer, deadline: NIODeadline) async throws -> WebPushAnswer {
        guard let origin = Origin(url) else { throw WebPushExchangeError.connectionLost("endpoint is not an http(s) URL") }
        var head = HTTPRequestHead(version: .http1_1, method: .POST, uri: Self.target(of: url), headers: headers)
        head.headers.replaceOrAdd(name: "Host", value: origin.hostHeader)
        head.headers.replaceOrAdd(name: "Content-Length", value: String(body.readableBytes))
        // An idle connection the server has closed meanwhile takes nothing; then a new one is opened.
        if let idle = self.takeIdle(origin) {
            do {
                return try await self.exchange(on: idle, origin: origin, head: head, body: body, deadline: deadline)
            } catch WebPushExchangeError.notSent {}
        }
        let connection = try await self.connect(origin, at: addresses, deadline: deadline).get()
        return try await self.exchange(on: connection, origin: origin, head: head, body: body, deadline: deadline)
    }

    private func exchange(
        on connection: Connection, origin: Origin, head: HTTPRequestHead, body: ByteBuffer, deadline: NIODeadline
    ) async throws -> WebPushAnswer {
        let promise = connection.channel.eventLoop.makePromise(of: WebPushAnswer.self)
        connection.channel.eventLoop.execute {
            connection.handler.value.send(head: head, body: body, deadline: deadline, promise: promise)
        }
        let answer: WebPushAnswer
        do {
            answer = try await promise.futureResult.get()
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
    func shutdown() async {
        let idle = self.state.withLock { state -> [Connection] in
            state.isShutDown = true
            defer { state.idle = [:] }
            return state.idle.values.flatMap { $0 }
        }
        for connection in idle { try? await connection.channel.close() }
    }

    /// The request target: the endpoint's path (percent-encoded as given; `/` when empty) and query.
    static func target(of url: URL) -> String {
        let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        var target = components?.percentEncodedPath ?? ""
        if target.isEmpty { target = "/" }
        if let query = components?.percentEncodedQuery { target += "?" + query }
        return target
    }

    private func takeIdle(_ origin: Origin) -> Connection? {
        while let connection = self.state.withLock({ state -> Connection? in state.idle[origin]?.popLast() }) {
            connection.idleClose.withLock { $0?.cancel(); $0 = nil }
            if connection.channel.isActive { return connection }
        }
        return nil
    }

    private func giveBack(_ connection: Connection, origin: Origin) {
        // The idle timer is set before the connection is listed, so whoever takes it can cancel it.
        let close = connection.channel.eventLoop.scheduleTask(in: self.idleTimeout) { connection.channel.close(promise: nil) }
        connection.idleClose.withLock { $0 = close }
        let kept = self.state.withLock { state -> Bool in
            guard !state.isShutDown, (state.idle[origin]?.count ?? 0) < self.maximumIdlePerOrigin else { return false }
            state.idle[origin, default: []].append(connection)
            return true
        }
        if !kept {
            close.cancel()
            connection.channel.close(promise: nil)
        }
    }

    /// Forgets `connection` once its channel has closed.
    private func forget(_ connection: Connection, origin: Origin) {
        self.state.withLock { state in
            guard let index = state.idle[origin]?.firstIndex(where: { $0 === connection }) else { return }
            state.idle[origin]?.remove(at: index)
            if state.idle[origin]?.isEmpty == true { state.idle[origin] = nil }
        }
    }

    private func connect(_ origin: Origin, at addresses: [IPAddress], deadline: NIODeadline) -> EventLoopFuture<Connection> {
        guard !self.state.withLock({ $0.isShutDown }) else {
            return MultiThreadedEventLoopGroup.singleton.next().makeFailedFuture(WebPushExchangeError.shutDown)
        }
        let timeout = min(self.connectTimeout, max(.milliseconds(1), deadline - .now()))
        let bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(timeout)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
        let connected: EventLoopFuture<any Channel>
        if let proxy = self.proxy {
            connected = bootstrap.connect(host: proxy.host, port: proxy.port).flatMap { channel in
                OutboundProxyTunnel.open(on: channel, to: origin.host, port: origin.port, through: proxy, timeout: timeout).map { channel }
            }
        } else if let pinned = addresses.lazy.compactMap({ try? SocketAddress(ipAddress: $0.description, port: origin.port) }).first {
            // The checked address, not a second lookup that could answer differently.
            connected = bootstrap.connect(to: pinned)
        } else {
            connected = bootstrap.connect(host: origin.host, port: origin.port)
        }
        let tls = self.tls
        return connected.flatMapThrowing { channel in
            let pipeline = channel.pipeline.syncOperations
            if origin.isTLS {
                do {
                    try pipeline.addHandler(NIOSSLClientHandler(context: tls.get(), serverHostname: origin.serverName))
                } catch {
                    channel.close(promise: nil)
                    throw error
                }
            }
            try pipeline.addHTTPClientHandlers()
            let handler = WebPushHTTP1Handler()
            try pipeline.addHandler(handler)
            let connection = Connection(channel: channel, handler: handler)
            channel.closeFuture.whenComplete { _ in self.forget(connection, origin: origin) }
            return connection
        }
    }
}
