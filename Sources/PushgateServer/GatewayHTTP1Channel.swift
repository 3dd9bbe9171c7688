import HummingbirdCore
import PushgateHTTP
import Logging
import NIOCore
import NIOHTTP1

/// The child channel of every gateway listener: an ``HTTPResponseSerializer`` that writes each answer as
/// one buffer, NIO's request decoder (in a ``GatewayRequestDecoder``), an ``HTTPConnectionGuard``, and an ``HTTPRequestDispatcher`` that
/// collects each request whole, answers one at a time through the router (holding pipelined ones back),
/// and closes the connection when the server stops.
///
/// It takes the place of Hummingbird's `HTTP1Channel`, which passes every request part through an async
/// sequence to a task per connection, every answer part back through an async writer, and converts each
/// part between NIO's and Swift HTTP Types' shapes on the way. A gorush request that queues nothing took
/// 236,600 instructions that way and 187,600 with this channel when it replaced it (callgrind;
/// benchmarks/README.md).
struct GatewayHTTP1Channel: ServerChildChannel {
    /// The accepted connection; its task waits for it to close.
    struct Connection: ServerChildChannelValue {
        let channel: any Channel
    }

    let responder: GatewayResponder
    let limits: HTTPConnectionGuard.Limits
    let connections: OpenConnections
    /// The largest bodies collected; a longer one is cut one byte past its limit, which the route
    /// refuses with 413.
    let bodyLimits: RequestBodyLimits

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Connection> {
        channel.eventLoop.makeCompletedFuture {
            let pipeline = channel.pipeline.syncOperations
            // NIO's server pipeline without its response encoder, error handler, header validator (the guard
            // answers parse errors in the gateway's shape; HTTPFields validated every answer's headers) or
            // pipelining handler (the dispatcher holds pipelined requests itself).
            let connectionGuard = HTTPConnectionGuard(limits: self.limits, connections: self.connections, logger: logger)
            try pipeline.addHandler(HTTPResponseSerializer())
            try pipeline.addHandler(ByteToMessageHandler(GatewayRequestDecoder(connectionGuard: connectionGuard)))
            try pipeline.addHandler(connectionGuard)
            try pipeline.addHandler(HTTPRequestDispatcher(responder: self.responder, bodyLimits: self.bodyLimits))
            return Connection(channel: channel)
        }
    }

    func handle(value: Connection, logger: Logger) async {
        // Requests are answered by the dispatcher's tasks; this task only lasts as long as the
        // connection, as the server's bookkeeping expects. Cancelled (the server is stopping at once),
        // it stops reading.
        await withTaskCancellationHandler {
            try? await value.channel.closeFuture.get()
        } onCancel: {
            value.channel.close(mode: .input, promise: nil)
        }
    }
}
