import NIOCore
import NIOPosix
import NIOSSL
import PushgateProviderSupport

/// One HTTP/2 connection to APNs, pinned to one event loop, opened on first use and opened again after it
/// closes, dies (an unanswered PING, see ``APNsLiveness``) or the server sends GOAWAY: TCP with keepalive
/// (through the HTTP proxy's CONNECT tunnel when there is one), TLS with ALPN `h2`, then
/// ``APNsHTTP2Handler``. An attempt succeeds when the server's SETTINGS arrive; after one that failed
/// (refused, TLS refused, or a server that accepted and said nothing), the next waits for an exponential
/// backoff with jitter (``ReconnectBackoff``); requests meanwhile fail at once as not processed.
///
/// Its state is touched only on its event loop.
final class APNsConnection: @unchecked Sendable {
    /// Where the connection goes.
    struct Target: Sendable {
        var host: String
        var port: Int
        var tls: NIOSSLContext
        var proxy: OutboundProxy?
        var liveness = APNsLiveness()
        var connectTimeout: TimeAmount = .seconds(10)

        /// `host`, or `host:port` for a port other than 443.
        var authority: String { self.port == 443 ? self.host : "\(self.host):\(self.port)" }
        /// The TLS server name: the host, unless it is an IP address (verified against the address then).
        var serverName: String? { IPAddress.tlsServerName(forHost: self.host) }
    }

    let eventLoop: any EventLoop
    private let target: Target
    private var ready: (channel: any Channel, handler: APNsHTTP2Handler)?
    private var connecting: EventLoopFuture<Void>?
    private var shutDown = false
    private var backoff: ReconnectBackoff
    private let events: APNsConnectionEvents

    init(eventLoop: any EventLoop, target: Target, events: APNsConnectionEvents = APNsConnectionEvents(), backoff: ReconnectBackoff = ReconnectBackoff()) {
        self.eventLoop = eventLoop
        self.target = target
        self.events = events
        self.backoff = backoff
    }

    /// Sends `request` and waits for APNs' answer or an ``APNsExchangeError`` (or a connection error).
    func execute(_ request: APNsRequest, deadline: NIODeadline) async throws -> APNsAnswer {
        let promise = self.eventLoop.makePromise(of: APNsAnswer.self)
        self.eventLoop.executeNowIfHere { self.start(request, deadline: deadline, promise: promise) }
        return try await promise.futureResult.get()
    }

    /// Opens a stream for `request` once the connection is open (called on the loop).
    private func start(_ request: APNsRequest, deadline: NIODeadline, promise: EventLoopPromise<APNsAnswer>) {
        // An open connection takes the stream at once, without a future for `connected()`.
        if let handler = self.openHandler {
            handler.send(request, deadline: deadline, promise: promise)
            return
        }
        // The connection being made may take its whole connect timeout (a silent server or proxy): the
        // request still ends at its own deadline.
        let expiry = self.eventLoop.scheduleTask(deadline: deadline) { promise.fail(APNsExchangeError.deadlineExceeded) }
        self.connected().whenComplete { result in
            expiry.cancel()
            switch result {
            case .success:
                guard let handler = self.ready?.handler else {
                    promise.fail(APNsExchangeError.notProcessed("the connection closed before the request was sent"))
                    return
                }
                handler.send(request, deadline: deadline, promise: promise)
            case .failure(let error):
                promise.fail(error)
            }
        }
    }

    /// Closes the connection; later requests fail.
    func shutdown() async {
        let channel: (any Channel)? = try? await self.eventLoop.submit {
            self.shutDown = true
            defer { self.ready = nil }
            return self.ready?.channel
        }.get()
        if let channel { try? await channel.close() }
    }

    /// The stream handler of the open connection, if there is one still taking streams.
    private var openHandler: APNsHTTP2Handler? {
        guard let handler = self.ready?.handler, !handler.isClosing else { return nil }
        return handler
    }

    /// Succeeds once ``ready`` holds an open connection.
    private func connected() -> EventLoopFuture<Void> {
        if self.openHandler != nil { return self.eventLoop.makeSucceededVoidFuture() }
        if let connecting = self.connecting { return connecting }
        guard !self.shutDown else {
            return self.eventLoop.makeFailedFuture(APNsExchangeError.notProcessed("the provider is shut down"))
        }
        let now = self.eventLoop.now
        if let wait = self.backoff.remaining(at: now) {
            let seconds = Double(wait.nanoseconds) / 1e9
            return self.eventLoop.makeFailedFuture(
                APNsExchangeError.notProcessed("connecting again in \((seconds * 10).rounded() / 10) s after a failed attempt"))
        }
        let future = self.connect()
        self.connecting = future
        future.whenComplete { result in
            self.connecting = nil
            // Success is counted when the server's SETTINGS arrive (TLS and HTTP/2 done), failure here
            // or when the connection ends before them.
            if case .failure = result { self.backoff.failed(at: self.eventLoop.now) }
        }
        return future
    }

    private func connect() -> EventLoopFuture<Void> {
        let target = self.target
        let bootstrap = ClientBootstrap(group: self.eventLoop)
            .connectTimeout(target.connectTimeout)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .outboundKeepalive()
        let connected: EventLoopFuture<any Channel>
        if let proxy = target.proxy {
            // One deadline for the TCP connect and the proxy's CONNECT together.
            let deadline = NIODeadline.now() + target.connectTimeout
            connected = bootstrap.connect(host: proxy.host, port: proxy.port).flatMap { channel in
                OutboundProxyTunnel.open(on: channel, to: target.host, port: target.port, through: proxy, deadline: deadline)
                    .map { channel }
            }
        } else {
            connected = bootstrap.connect(host: target.host, port: target.port)
        }
        return connected.flatMapThrowing { channel in
            let handler = APNsHTTP2Handler(authority: target.authority, liveness: target.liveness)
            let events = self.events
            handler.onLivenessEvent = { event in
                switch event {
                case .pingSent: events.pingSent()
                case .pingMissed: events.pingMissed()
                }
            }
            let pipeline = channel.pipeline.syncOperations
            try pipeline.addHandler(NIOSSLClientHandler(context: target.tls, serverHostname: target.serverName))
            // Every header value this client sends is either its own (the path's token is letters and
            // digits, the provider token base64url) or checked by `APNsRequestFactory.problem(with:body:)`
            // before the request is built.
            try pipeline.addHandler(handler)
            handler.onSettings = { [weak self] in self?.backoff.succeeded() }
            handler.onClosing = { [weak self, weak handler] in
                guard let self, let handler, self.ready?.handler === handler else { return }
                if !handler.settingsReceived { self.backoff.failed(at: self.eventLoop.now) }
                self.ready = nil
            }
            channel.closeFuture.whenComplete { _ in events.closed() }
            events.opened()
            self.ready = (channel, handler)
            if self.shutDown { channel.close(promise: nil) }
        }
    }
}
