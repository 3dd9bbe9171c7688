import Foundation
import Hummingbird
import HummingbirdTesting
import NIOPosix
import PostgresNIO
import PushgateHTTP
@testable import PushgateServer
import PushgateStorePostgres
import Testing

@Suite("Health")
struct HealthTests {
    /// A gateway whose PostgreSQL database disappears answers 503 instead of pretending to be healthy.
    @Test func healthIs503WhenTheDatabaseIsGone() async throws {
        let url = try #require(ProcessInfo.processInfo.environment["PUSHGATE_TEST_POSTGRES_URL"], "run with scripts/test")
        let components = try #require(URLComponents(string: url))
        let host = try #require(components.host)
        let user = try #require(components.user)
        let port = components.port ?? 5432
        let name = "pushgate_h_\(UInt32.random(in: 0...UInt32.max))"
        try await Self.administer(host: host, port: port, user: user, "CREATE DATABASE \(name)")

        let store = try await PostgresStore.connect(
            PostgresStoreConfiguration(host: host, port: port, username: user, password: nil, database: name, tls: .disable),
            logger: TestLogging.quiet
        )
        let metrics = GatewayMetrics()
        var app = RouterBehaviourTests.makeApplication(store: store, metrics: metrics)
        app.addServices(store)
        try await app.test(.live) { client in
            #expect(try await client.execute(uri: "/health", method: .get).status == .ok)
            try await Self.administer(host: host, port: port, user: user, "DROP DATABASE \(name) WITH (FORCE)")
            let started = ContinuousClock.now
            #expect(try await client.execute(uri: "/health", method: .get).status == .serviceUnavailable)
            // Answered, not left hanging on a pool that retries its connections forever; the bound is far
            // from scheduling delays on a loaded machine.
            #expect(ContinuousClock.now - started < .seconds(60))
        }
    }

    static func administer(host: String, port: Int, user: String, _ sql: String) async throws {
        let connection = try await PostgresConnection.connect(
            on: MultiThreadedEventLoopGroup.singleton.any(),
            configuration: .init(host: host, port: port, username: user, password: nil, database: "postgres", tls: .disable),
            id: 1,
            logger: TestLogging.quiet
        ).get()
        do {
            _ = try await connection.query(PostgresQuery(unsafeSQL: sql), logger: TestLogging.quiet)
        } catch {
            try? await connection.close()
            throw error
        }
        try await connection.close()
    }
}
