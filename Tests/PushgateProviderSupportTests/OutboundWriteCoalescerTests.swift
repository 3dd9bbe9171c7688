import NIOCore
import NIOEmbedded
import PushgateProviderSupport
import Testing

@Suite("Outbound write coalescer")
struct OutboundWriteCoalescerTests {
    /// Writes `parts` with a promise each.
    static func write(_ parts: [String], to channel: EmbeddedChannel) -> [EventLoopFuture<Void>] {
        parts.map { part in
            let promise = channel.eventLoop.makePromise(of: Void.self)
            channel.write(ByteBuffer(string: part), promise: promise)
            return promise.futureResult
        }
    }

    static func outbound(_ channel: EmbeddedChannel) throws -> [String] {
        var written: [String] = []
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) { written.append(String(buffer: buffer)) }
        return written
    }

    @Test func theWritesOfAFlushPassAsOneInOrderAndEachPromiseCompletes() throws {
        let channel = EmbeddedChannel(handler: OutboundWriteCoalescer())
        let futures = Self.write(["head", "", "data-head", "payload"], to: channel)
        #expect(try Self.outbound(channel).isEmpty)
        let completed = Completions(futures)
        #expect(completed.count == 0)
        channel.flush()
        #expect(try Self.outbound(channel) == ["headdata-headpayload"])
        for future in futures { try future.wait() }
        // The next flush starts again.
        let next = Self.write(["x", "y"], to: channel)
        channel.flush()
        #expect(try Self.outbound(channel) == ["xy"])
        for future in next { try future.wait() }
        #expect(try channel.finish().isClean)
    }

    @Test func noWriteIsLongerThanTheLimitUnlessOneBufferIs() throws {
        let channel = EmbeddedChannel(handler: OutboundWriteCoalescer(limit: 10))
        _ = Self.write(["aaaa", "bbbb", "cc", "d", "eeeeeeeeeeeeeee", "ff"], to: channel)
        channel.flush()
        #expect(try Self.outbound(channel) == ["aaaabbbbcc", "d", "eeeeeeeeeeeeeee", "ff"])
        #expect(try channel.finish().isClean)
    }

    @Test func aFailedWriteFailsEveryPromiseItCarried() throws {
        let channel = EmbeddedChannel()
        // Below the coalescer, a handler that fails every write.
        try channel.pipeline.syncOperations.addHandler(FailingWrites())
        try channel.pipeline.syncOperations.addHandler(OutboundWriteCoalescer())
        let futures = Self.write(["a", "b", "c"], to: channel)
        channel.flush()
        for future in futures {
            #expect(throws: FailingWrites.Refused.self) { try future.wait() }
        }
        _ = try? channel.finish()
    }

    @Test func writesNotFlushedBeforeACloseReachTheHandlerBelowFirst() throws {
        let channel = EmbeddedChannel(handler: OutboundWriteCoalescer())
        _ = Self.write(["last", "words"], to: channel)
        // One write of both: closing hands them on first, so that the channel below settles their promises as it would
        // without the coalescer.
        guard case .leftOvers(_, let outbound, let pending) = try channel.finish() else {
            Issue.record("the writes were held back")
            return
        }
        #expect(outbound.isEmpty)
        #expect(pending.count == 1)
    }

    /// Counts the futures completed so far (EmbeddedChannel runs everything on the test's thread).
    final class Completions {
        private(set) var count = 0
        init(_ futures: [EventLoopFuture<Void>]) {
            for future in futures { future.assumeIsolated().whenComplete { _ in self.count += 1 } }
        }
    }

    final class FailingWrites: ChannelOutboundHandler {
        typealias OutboundIn = ByteBuffer
        struct Refused: Error {}
        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            promise?.fail(Refused())
        }
    }
}
