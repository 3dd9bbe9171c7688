public import AsyncHTTPClient
import Foundation
import NIOCore
import NIOSSL

/// How a back end reaches a push API that takes OAuth-authorised messages at one URL (FCM HTTP v1, Huawei
/// Push Kit): its messages over keep-alive HTTP/1.1 connections of its own (``HTTP1ConnectionPool``,
/// the send URL read once into a ``HTTP1ConnectionPool/Destination``), and its token endpoint, asked
/// about once an hour, through an `HTTPClient`. Both trust the app's `ca_file` besides the system's roots
/// and go through the configured proxy.
public struct PushAPIConnections: Sendable {
    /// The client for the token endpoint.
    public let tokenClient: HTTPClient
    /// The connections messages go over.
    public let messages: HTTP1ConnectionPool
    /// Where messages are posted.
    public let sendDestination: HTTP1ConnectionPool.Destination

    /// Creates the client and the pool (connections open on first use).
    /// - Parameters:
    ///   - sendURL: the messages' URL, an `http(s)` URL with a host (the configuration checked it).
    ///   - caFile: a PEM file of extra trust roots.
    ///   - proxy: the CONNECT proxy both go through.
    ///   - maxConnections: the most message connections kept (and the token client's soft limit).
    ///   - events: told of each message connection opened and closed.
    public init(
        sendURL: String, caFile: String?, proxy: OutboundProxy?, maxConnections: Int, events: ProviderConnectionEvents = ProviderConnectionEvents()
    ) {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let caFile { tls.additionalTrustRoots = [.file(caFile)] }
        var clientConfiguration = HTTPClient.Configuration(
            tlsConfiguration: tls, redirectConfiguration: .disallow,
            connectionPool: .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: maxConnections)
        )
        clientConfiguration.proxy = proxy?.clientProxy
        clientConfiguration.skipNoOpTracing()
        // A token endpoint (or proxy) that refuses connections fails the token request at once, instead of
        // every delivery waiting out the request's deadline while the client tries to connect again: the
        // delivery is retried later (and the app's circuit opens), and a token is fetched once an hour.
        clientConfiguration.connectionPool.retryConnectionEstablishment = false
        self.tokenClient = HTTPClient(eventLoopGroupProvider: .singleton, configuration: clientConfiguration)
        var messageTLS = tls
        messageTLS.applicationProtocols = ["http/1.1"]
        self.messages = HTTP1ConnectionPool(
            tls: caFile == nil ? nil : Result { try NIOSSLContext(configuration: messageTLS) },
            proxy: proxy, connectTimeout: .seconds(10), idleTimeout: .seconds(60), maximumIdlePerOrigin: maxConnections, bodyLimit: 64 * 1024,
            events: events
        )
        guard let destination = URL(string: sendURL).flatMap(HTTP1ConnectionPool.Destination.init) else {
            preconditionFailure("a configuration accepted a send URL that is not an http(s) URL")
        }
        self.sendDestination = destination
    }

    /// Closes the message connections and the token client.
    public func shutdown() async throws {
        await self.messages.shutdown()
        try await self.tokenClient.shutdown()
    }
}
