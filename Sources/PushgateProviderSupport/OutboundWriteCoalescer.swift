public import NIOCore

/// Joins the buffers written between two flushes into one write, placed just above a TLS handler so that
/// it seals one record for them instead of one each.
///
/// NIOHTTP2 writes each frame as its own buffer, and a DATA frame as two (its head, then its payload), so
/// one answer of the sandbox's APNs emulator would be three TLS records, each with its own header, tag and
/// `SSL_write`. (The gateway's own APNs client gathers a tick's frames in one buffer itself.) Buffers are
/// copied into one until `limit` bytes (a TLS record's most plaintext), then passed on as one write. Each
/// write's promise completes when the write that carries its bytes does; order is kept.
public final class OutboundWriteCoalescer: ChannelOutboundHandler, RemovableChannelHandler {
    public typealias OutboundIn = ByteBuffer
    public typealias OutboundOut = ByteBuffer

    private let limit: Int
    private var pending: ByteBuffer?
    private var pendingPromise: EventLoopPromise<Void>?

    /// Creates a coalescer that passes on at most `limit` bytes a write (a larger buffer passes alone).
    public init(limit: Int = 16 * 1024) {
        self.limit = limit
    }

    public func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        var buffer = self.unwrapOutboundIn(data)
        if let pendingBytes = self.pending?.readableBytes, pendingBytes + buffer.readableBytes > self.limit {
            self.passPending(context: context)
        }
        if self.pending == nil {
            self.pending = buffer
        } else {
            self.pending!.writeBuffer(&buffer)
        }
        if let promise {
            if let pendingPromise = self.pendingPromise {
                pendingPromise.futureResult.cascade(to: promise)
            } else {
                self.pendingPromise = promise
            }
        }
    }

    public func flush(context: ChannelHandlerContext) {
        self.passPending(context: context)
        context.flush()
    }

    public func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        // What was written stays ahead of the close, as it would without this handler.
        self.passPending(context: context)
        context.close(mode: mode, promise: promise)
    }

    public func handlerRemoved(context: ChannelHandlerContext) {
        self.passPending(context: context)
    }

    private func passPending(context: ChannelHandlerContext) {
        guard let pending = self.pending else { return }
        let promise = self.pendingPromise
        self.pending = nil
        self.pendingPromise = nil
        context.write(self.wrapOutboundOut(pending), promise: promise)
    }
}
