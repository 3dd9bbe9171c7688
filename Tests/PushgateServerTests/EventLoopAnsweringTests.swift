import AsyncHTTPClient
import Hummingbird
import NIOCore
import NIOHTTP1
import NIOPosix
import PushgateConfig
import PushgateCore
import PushgateHTTP
@testable import PushgateServer
import ServiceLifecycle
import Testing

/// Where a request's task runs: on its connection's event loop, with CPU-heavy steps on Swift's shared
/// pool (`ComputePool`).
@Suite("Answering on the event loop")
struct EventLoopAnsweringTests {
    /// Whether the calling thread is one of NIO's event loops, and which.
    static var currentLoop: (any EventLoop)? { MultiThreadedEventLoopGroup.currentEventLoop }

    @Test func aTaskThatPrefersALoopStaysOnItAndComputesOffIt() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let executor = EventLoopTaskExecutor(eventLoop: loop)
        let seen = await Task(executorPreference: executor) { () async -> [String: Bool] in
            var seen: [String: Bool] = ["start": loop.inEventLoop]
            // Resumed from a timer of Swift's runtime, not from the loop.
            try? await Task.sleep(for: .milliseconds(5))
            seen["after a sleep"] = loop.inEventLoop
            // Resumed from a promise completed on another loop's thread.
            let other = MultiThreadedEventLoopGroup.singleton.next()
            _ = try? await other.submit { 1 }.get()
            seen["after another loop's future"] = loop.inEventLoop
            seen["compute"] = await ComputePool.run { Self.currentLoop != nil }
            // A synchronous function passed as it is, not a closure written in place.
            let onALoop: () -> Bool = { Self.currentLoop != nil }
            seen["compute, a function"] = await ComputePool.run(onALoop)
            seen["compute with awaits"] = await ComputePool.run { () async -> Bool in
                _ = try? await MultiThreadedEventLoopGroup.singleton.next().submit { 1 }.get()
                return Self.currentLoop != nil
            }
            seen["after compute"] = loop.inEventLoop
            seen["reading a small input"] = await ComputePool.run(readingBytes: ComputePool.largeInput - 1) { Self.currentLoop != nil }
            seen["reading a large input"] = await ComputePool.run(readingBytes: ComputePool.largeInput) { Self.currentLoop != nil }
            seen["child task"] = await withTaskGroup(of: Bool.self) { children in
                children.addTask { loop.inEventLoop }
                return await children.next() ?? false
            }
            return seen
        }.value
        #expect(
            seen == [
                "start": true, "after a sleep": true, "after another loop's future": true, "compute": false, "compute, a function": false,
                "compute with awaits": false, "after compute": true,
                "reading a small input": true, "reading a large input": false, "child task": true,
            ]
        )
        try await group.shutdownGracefully()
    }

    @Test func aPollLoopSleepsOnItsLoopsTimerAndACancelledSleepEndsAtOnce() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let executor: any PollExecutor = EventLoopTaskExecutor(eventLoop: loop)
        let slept = await Task(executorPreference: executor) { () async -> (onLoop: Bool, elapsed: Duration) in
            let start = ContinuousClock.now
            try? await executor.sleep(for: .milliseconds(30))
            return (loop.inEventLoop, ContinuousClock.now - start)
        }.value
        #expect(slept.onLoop)
        #expect(slept.elapsed >= .milliseconds(30))
        // A sleep of ten minutes, cancelled: it throws a cancellation within moments.
        let long = Task(executorPreference: executor) { () async -> (error: (any Error)?, elapsed: Duration) in
            let start = ContinuousClock.now
            do {
                try await executor.sleep(for: .seconds(600))
                return (nil, ContinuousClock.now - start)
            } catch {
                return (error, ContinuousClock.now - start)
            }
        }
        try await Task.sleep(for: .milliseconds(20))
        long.cancel()
        let ended = await long.value
        #expect(ended.error is CancellationError)
        #expect(ended.elapsed < .seconds(60))
        // Without an executor, the optional's sleep is `Task.sleep`, cancellable the same way.
        let none: (any PollExecutor)? = nil
        let start = ContinuousClock.now
        try await none.sleep(for: .milliseconds(10))
        #expect(ContinuousClock.now - start >= .milliseconds(10))
        try await group.shutdownGracefully()
    }

    @Test func aListenersRouteRunsOnItsConnectionsLoop() async throws {
        let router = Router(context: GatewayRequestContext.self)
        router.post("/where") { request, _ -> String in
            let start = Self.currentLoop
            _ = try await request.body.collect(upTo: 1024)
            let computedOnALoop = await ComputePool.run { Self.currentLoop != nil }
            let end = Self.currentLoop
            return "\(start != nil) \(computedOnALoop) \(start != nil && end === start)"
        }
        let ports = AsyncStream.makeStream(of: Int.self)
        let listener = Gateway.listener(
            name: "test", responder: router.buildResponder(), limits: ListenerLimits(HTTPSettings()), connections: OpenConnections(limit: 1_024), host: "127.0.0.1", port: 0,
            logger: TestLogging.quiet, onListening: { _, _, port in ports.continuation.yield(port) }
        )
        let server = Task { try await listener.run() }
        defer { server.cancel() }
        var iterator = ports.stream.makeAsyncIterator()
        let port = try #require(await iterator.next())
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        defer { _ = client.shutdown() }
        // Two requests on one connection, one after the other, and a third on a connection of its own.
        for _ in 0..<3 {
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/where")
            request.method = .POST
            request.body = .bytes(ByteBuffer(string: "{}"))
            let response = try await client.execute(request, timeout: .seconds(30))
            #expect(response.status == .ok)
            let text = String(buffer: try await response.body.collect(upTo: 1024))
            // On a loop at the start and after the await, the compute step off it.
            #expect(text == "true false true")
        }
    }
}
