import CoreMetrics
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import PushgateConfig
import PushgateCore
import PushgateDelivery
import PushgateHTTP
@testable import PushgateServer
import PushgateStore
import PushgateStoreSQLite
import PushgateTestSupport
import Testing

/// The console's limit on failed sign-ins holds for the JSON API's bearer tokens and for tries sent at once.
@Suite("Console sign-in limit")
struct ConsoleSignInLimitTests {
    static let token = "0123456789abcdef-admin"

    static func withConsole(limit: Int, _ body: @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        try await Self.withConsole(limit: limit, sandbox: false, tokens: [.init(token: Self.token)]) { client, _ in try await body(client) }
    }

    /// A console with the given admin tokens, in the sandbox or not; `body` gets the client and the routes.
    static func withConsole(
        limit: Int, sandbox: Bool, tokens: [ConsoleSettings.AdminToken], _ body: @Sendable (any TestClientProtocol, ConsoleRoutes) async throws -> Void
    ) async throws {
        let directory = try TemporaryDirectory()
        let store = BoundedStore(try await SQLiteStore.open(path: directory.path("store.sqlite"), logger: TestLogging.quiet), timeout: .seconds(5))
        let overview = ConsoleOverviewSource(
            store: store, apps: { [] }, credentials: { [] }, failures: RecentFailures(), sandbox: false, started: .now, instance: "this/1",
            storeIsShared: false, generation: { 1 },
            state: { _ in DeliveryAppState(inFlight: 0, circuitOpen: false, credentialsFailing: false, latencyMilliseconds: nil) }
        )
        let dispatcher = Dispatcher(directory: ProviderDirectory([]), store: store, metrics: DeliveryMetrics(factory: NOOPMetricsHandler.instance), logger: TestLogging.quiet)
        let console = ConsoleRoutes(
            admins: LiveValue(ConsoleAdmins(tokens)), sessions: ConsoleSessions(), limiter: ConsoleSignInLimiter(limit: limit),
            sandbox: sandbox, trustForwardedProto: false, overview: overview,
            testPush: ConsoleTestPush(dispatcher: dispatcher, timeout: .seconds(5), logger: TestLogging.quiet), logger: TestLogging.quiet
        )
        let router = GatewayRouterBuilder.build(routes: console.routes, metrics: GatewayMetrics(), maxRequestBodySize: 65_536)
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)), logger: TestLogging.quiet)
        try await app.test(.live) { client in try await body(client, console) }
    }

    static func overview(_ client: any TestClientProtocol, bearer: String) async throws -> HTTPResponse.Status {
        try await client.execute(uri: "/console/api/overview", method: .get, headers: [.authorization: "Bearer " + bearer]).status
    }

    /// Wrong bearer tokens count as failed sign-ins: after the limit the address is refused (429), even
    /// with the right token, where before it could guess without end.
    @Test func wrongBearerTokensCountAgainstTheAddress() async throws {
        try await Self.withConsole(limit: 3) { client in
            // Right tokens cost nothing.
            for _ in 0..<5 { #expect(try await Self.overview(client, bearer: Self.token) == .ok) }
            for guess in 0..<3 { #expect(try await Self.overview(client, bearer: "guess-\(guess)-0123456789") == .unauthorized) }
            #expect(try await Self.overview(client, bearer: "guess-4-0123456789") == .tooManyRequests)
            #expect(try await Self.overview(client, bearer: Self.token) == .tooManyRequests)
            // The sign-in form is refused too.
            let form = try await client.execute(
                uri: "/console/session", method: .post, headers: [.contentType: "application/x-www-form-urlencoded"],
                body: ByteBuffer(string: "token=" + Self.token)
            )
            #expect(form.status == .tooManyRequests)
        }
    }

    /// A proxy's own Authorization header (Basic, or a Bearer token of its own) beside a signed-in
    /// browser's cookie is not a sign-in: the session answers, and nothing counts against the address.
    /// Alone, another scheme is no try either (401, never 429); the bearer scheme is read in any case.
    @Test func aProxysAuthorizationHeaderBesideASessionIsNoSignIn() async throws {
        try await Self.withConsole(limit: 3) { client in
            let signIn = try await client.execute(
                uri: "/console/session", method: .post, headers: [.contentType: "application/x-www-form-urlencoded"],
                body: ByteBuffer(string: "token=" + Self.token)
            )
            let cookie = try #require(signIn.headers[.setCookie]?.split(separator: ";").first.map(String.init))
            for authorization in ["Basic dTpw", "Bearer eyJhbGciOiJSUzI1NiJ9.proxy.jwt", "Basic dTpw", "Bearer x", "Basic dTpw"] {
                let answer = try await client.execute(
                    uri: "/console/api/overview", method: .get, headers: [.authorization: authorization, .cookie: cookie]
                )
                #expect(answer.status == .ok, "\(authorization)")
            }
            for _ in 0..<5 {
                #expect(try await client.execute(uri: "/console/api/overview", method: .get, headers: [.authorization: "Basic dTpw"]).status == .unauthorized)
            }
            #expect(try await client.execute(uri: "/console/api/overview", method: .get, headers: [.authorization: "bearer " + Self.token]).status == .ok)
            #expect(try await Self.overview(client, bearer: Self.token) == .ok)
        }
    }

    /// The JSON API answers a wrong method in its own shape, `{"error": …}`, not Matrix's.
    @Test func theAPIsWrongMethodIsAnsweredInItsOwnShape() async throws {
        try await Self.withConsole(limit: 3) { client in
            let answer = try await client.execute(uri: "/console/api/overview", method: .post, headers: [.authorization: "Bearer " + Self.token])
            #expect(answer.status == .methodNotAllowed)
            #expect(answer.headers[.allow] == "GET, HEAD")
            #expect(answer.headers[.contentType] == "application/json; charset=utf-8")
            #expect(String(buffer: answer.body) == #"{"error":"Unrecognized request"}"#)
        }
    }

    /// Tries sent at once cannot all pass the check before the first is counted: of 20 wrong tokens sent
    /// together, no more than the limit are checked.
    @Test func triesSentAtOnceAreCountedAsTheyStart() async throws {
        try await Self.withConsole(limit: 3) { client in
            let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for guess in 0..<20 { group.addTask { try await Self.overview(client, bearer: "guess-\(guess)-0123456789") } }
                return try await group.reduce(into: [HTTPResponse.Status]()) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == .unauthorized }.count == 3)
            #expect(statuses.filter { $0 == .tooManyRequests }.count == 17)
        }
    }
}
