import Foundation
import NIOCore
import Testing

/// The start-up log names the allocator that serves the process, and glibc's arena limit is applied only
/// where glibc's malloc is the one serving it.
@Suite("pushgate serve: the allocator")
struct AllocatorProcessTests {
    /// Debian's libjemalloc2, which scripts/test installs: what the Jemalloc trait links in, as a shared
    /// library a test build can be started with.
    static let jemallocLibrary = "/usr/lib/\(Self.multiarch)/libjemalloc.so.2"
    static var multiarch: String {
        #if arch(x86_64)
        "x86_64-linux-gnu"
        #else
        "aarch64-linux-gnu"
        #endif
    }

    /// Starts `pushgate serve`, returns its `threads` event once it answers /health, and stops it.
    static func threadsEvent(environment: [String: String]) async throws -> [String: String] {
        let directory = try TemporaryDirectory()
        let config = try directory.write("pushgate.yaml", ServeProcessTests.config())
        let gateway = try GatewayProcess(arguments: ["serve", "--config", config], environment: environment, directory: directory.url.path)
        defer { gateway.kill() }
        let listener = try #require(try await gateway.waitForListeners().first, "\(gateway.errors)")
        #expect(try await ServeProcessTests.get("http://127.0.0.1:\(listener.port)/health").status == 200)
        gateway.signal(SIGTERM)
        #expect(await gateway.waitForExit(timeout: .seconds(30)) == 0, "\(gateway.errors)")
        return try #require(gateway.logEvents.first { $0["msg"] == "threads" }, "\(gateway.errors)")
    }

    #if os(Linux)
    @Test func theTestBuildRunsOnGlibcMallocWithOneArenaForTwoCores() async throws {
        // scripts/test builds without the Jemalloc trait.
        let threads = try await Self.threadsEvent(environment: ["LD_PRELOAD": ""])
        #expect(threads["allocator"] == "libc malloc", "\(threads)")
        // Unless the environment sets glibc's limit itself, which then stands.
        let limit = ProcessInfo.processInfo.environment["MALLOC_ARENA_MAX"] == nil ? "\(max(1, System.coreCount / 2))" : "default"
        #expect(threads["malloc_arenas"] == limit, "\(threads)")
    }

    @Test func underJemallocTheLogSaysSoAndGlibcsLimitIsNotApplied() async throws {
        try #require(
            FileManager.default.fileExists(atPath: Self.jemallocLibrary),
            "\(Self.jemallocLibrary) is missing: install Debian's libjemalloc2 (scripts/test does)"
        )
        let threads = try await Self.threadsEvent(environment: ["LD_PRELOAD": Self.jemallocLibrary, "MALLOC_CONF": "narenas:3"])
        #expect(threads["allocator"]?.hasPrefix("jemalloc 5.") == true, "\(threads)")
        // jemalloc's own arenas (the 3 asked for, and the one it keeps for huge blocks), not glibc's limit.
        #expect(threads["malloc_arenas"] == "4", "\(threads)")
    }
    #endif
}
