import NIOCore
import NIOSSL

/// Merges the flushes made on an HTTP/2 connection during one event-loop tick into one.
///
/// The HTTP client flushes every part of a request on its own (head, body, end of stream), and each flush
/// of a TLS connection is a TLS record and a `write` system call. Sitting between TLS and HTTP/2, this
/// handler lets the writes through but passes one flush on at the end of the tick, so the parts of a
/// request, and the requests of concurrent streams, leave in one record.
final class FlushCoalescingHandler: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = NIOAny
    typealias OutboundOut = NIOAny

    private var flushScheduled = false

    func flush(context: ChannelHandlerContext) {
        guard !self.flushScheduled else { return }
        self.flushScheduled = true
        let bound = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
        context.eventLoop.execute {
            let (handler, context) = bound.value
            handler.flushScheduled = false
            context.flush()
        }
    }

    /// Adds the handler right after TLS on a connection channel (an HTTP client's HTTP/2 connection
    /// initializer); a channel without TLS is left as it is.
    static func install(on channel: any Channel) -> EventLoopFuture<Void> {
        channel.eventLoop.submit {
            let pipeline = channel.pipeline.syncOperations
            guard let tls = try? pipeline.context(handlerType: NIOSSLHandler.self) else { return }
            try pipeline.addHandler(FlushCoalescingHandler(), position: .after(tls.handler))
        }
    }
}
