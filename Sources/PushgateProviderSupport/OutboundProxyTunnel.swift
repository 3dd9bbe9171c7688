import Foundation
public import NIOCore
import NIOExtras
import NIOHTTP1

/// An HTTP CONNECT tunnel through an ``OutboundProxy``: on a channel connected to the proxy, asks for a
/// tunnel to the target (with the proxy's Basic credentials) and, once the proxy agrees, leaves the channel
/// as a plain byte stream to the target, ready for TLS.
public enum OutboundProxyTunnel {
    /// Opens the tunnel on `channel` (connected to `proxy`); fails, closing the channel, when the proxy
    /// refuses or has not answered by `deadline` (the connection's, which the TCP connect to the proxy
    /// already spent part of).
    public static func open(
        on channel: any Channel, to host: String, port: Int, through proxy: OutboundProxy, deadline: NIODeadline
    ) -> EventLoopFuture<Void> {
        let established = channel.eventLoop.makePromise(of: Void.self)
        var headers = HTTPHeaders()
        if let credentials = proxy.credentials {
            let basic = Data("\(credentials.username):\(credentials.password)".utf8).base64EncodedString()
            headers.add(name: "Proxy-Authorization", value: "Basic \(basic)")
        }
        let encoder = HTTPRequestEncoder()
        let decoder = ByteToMessageHandler(HTTPResponseDecoder(leftOverBytesStrategy: .forwardBytes))
        let connectHandler = NIOHTTP1ProxyConnectHandler(
            targetHost: host, targetPort: port, headers: headers, deadline: deadline, promise: established
        )
        do {
            let pipeline = channel.pipeline.syncOperations
            try pipeline.addHandler(encoder)
            try pipeline.addHandler(decoder)
            try pipeline.addHandler(connectHandler)
        } catch {
            channel.close(promise: nil)
            return channel.eventLoop.makeFailedFuture(error)
        }
        // The CONNECT handler takes itself off once the tunnel is up; the caller's handlers go on only once
        // the HTTP/1 codec is off too (a removal may finish on a later tick).
        return established.futureResult.assumeIsolated().flatMap { () -> EventLoopFuture<Void> in
            let pipeline = channel.pipeline.syncOperations
            let removals = [pipeline.removeHandler(decoder), pipeline.removeHandler(encoder)]
            return EventLoopFuture.andAllSucceed(removals, on: channel.eventLoop)
        }.nonisolated().flatMapErrorThrowing { error in
            channel.close(promise: nil)
            throw error
        }
    }
}
