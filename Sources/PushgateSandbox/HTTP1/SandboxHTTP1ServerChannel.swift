import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOSSL

/// How an HTTP/1 emulator (FCM, Web Push) serves one TCP connection: optional TLS, NIO's HTTP/1 server
/// pipeline (`configureHTTPServerPipeline`: parsing, keep-alive, pipelining order, 400 on malformed
/// requests), then the emulator's ``SandboxHTTP1Handler``, which answers each request on the event loop
/// with no task per request.
///
/// A Hummingbird server child channel, so the emulator still runs as a Hummingbird `Application` (binding,
/// `onServerRunning`, graceful shutdown through `ChannelShouldQuiesceEvent`, which NIO's pipeline handler
/// honours: idle connections close, busy ones after their answer).
struct SandboxHTTP1ServerChannel: ServerChildChannel {
    struct Value: ServerChildChannelValue {
        let channel: any Channel
    }

    /// TLS for the connection, if the emulator serves https.
    let sslContext: NIOSSLContext?
    /// Makes the handler of one connection.
    let makeHandler: @Sendable () -> SandboxHTTP1Handler

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            try channel.syncOptions?.setOption(ChannelOptions.allowRemoteHalfClosure, value: false)
            let pipeline = channel.pipeline.syncOperations
            if let sslContext = self.sslContext {
                try pipeline.addHandler(NIOSSLServerHandler(context: sslContext))
            }
            try pipeline.configureHTTPServerPipeline(withErrorHandling: true)
            try pipeline.addHandler(self.makeHandler())
            return Value(channel: channel)
        }
    }

    /// Waits for the connection to close (the handlers do all the work); cancellation closes it.
    func handle(value: Value, logger: Logger) async {
        await value.channel.closedOrClosedOnCancellation()
    }
}

extension Channel {
    /// Returns once the channel has closed; cancelling the waiting task closes it. What an emulator's
    /// server child channel does with a connection its handlers serve on their own.
    func closedOrClosedOnCancellation() async {
        await withTaskCancellationHandler {
            try? await self.closeFuture.get()
        } onCancel: {
            self.close(promise: nil)
        }
    }
}
