import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import PushgateConfig
@testable import PushgateServer
import Testing

/// The sandbox's console is open to loopback clients only while the running configuration has no admin
/// token: a reload that adds tokens closes it (and ends the loopback visitor's session), one that removes
/// them all opens it again.
@Suite("Console in the sandbox, reloaded")
struct ConsoleSandboxReloadTests {
    @Test func aReloadThatAddsAdminTokensClosesTheLoopbackConsole() async throws {
        try await ConsoleSignInLimitTests.withConsole(limit: 5, sandbox: true, tokens: []) { client, console in
            #expect(console.openToLoopback)
            #expect(try await client.execute(uri: "/console/api/overview", method: .get).status == .ok)
            // The page starts a session for the loopback visitor.
            let page = try await client.execute(uri: "/console", method: .get)
            #expect(page.status == .ok)
            let cookie = try #require(page.headers[.setCookie]?.split(separator: ";").first.map(String.init))
            #expect(try await client.execute(uri: "/console/api/overview", method: .get, headers: [.cookie: cookie]).status == .ok)

            console.replaceAdmins([.init(token: ConsoleSignInLimitTests.token)])
            #expect(!console.openToLoopback)
            #expect(try await client.execute(uri: "/console/api/overview", method: .get).status == .unauthorized)
            #expect(try await client.execute(uri: "/console/api/overview", method: .get, headers: [.cookie: cookie]).status == .unauthorized)
            let redirected = try await client.execute(uri: "/console", method: .get)
            #expect(redirected.status == .seeOther)
            #expect(redirected.headers[.location] == "/console/session")
            #expect(try await ConsoleSignInLimitTests.overview(client, bearer: ConsoleSignInLimitTests.token) == .ok)

            console.replaceAdmins([])
            #expect(console.openToLoopback)
            #expect(try await client.execute(uri: "/console/api/overview", method: .get).status == .ok)
        }
    }

    /// A request a proxy forwarded is not a loopback visitor's, though the proxy connects over loopback:
    /// a reverse proxy on the sandbox's host must not open its console to the proxy's clients.
    @Test func aForwardedRequestIsNotALoopbackVisitors() async throws {
        try await ConsoleSignInLimitTests.withConsole(limit: 5, sandbox: true, tokens: []) { (client, console) async throws in
            #expect(try await client.execute(uri: "/console/api/overview", method: .get).status == .ok)
            for (name, value) in [("X-Forwarded-For", "203.0.113.5"), ("Forwarded", "for=203.0.113.5"), ("X-Real-IP", "203.0.113.5")] {
                let headers: HTTPFields = [HTTPField.Name(name)!: value]
                #expect(try await client.execute(uri: "/console/api/overview", method: .get, headers: headers).status == .unauthorized, "\(name)")
                #expect(try await client.execute(uri: "/console", method: .get, headers: headers).status == .seeOther, "\(name)")
            }
        }
    }

    /// A loopback visitor's session started as a reload closed the console (after the reload ended the
    /// sessions) is not honoured.
    @Test func aSandboxSessionStartedAcrossTheReloadIsRefused() async throws {
        try await ConsoleSignInLimitTests.withConsole(limit: 5, sandbox: true, tokens: []) { (client, console) async throws in
            console.replaceAdmins([.init(token: ConsoleSignInLimitTests.token)])
            let late = console.sessions.start(for: ConsoleRoutes.sandboxVisitor)
            let cookie = ConsoleRoutes.cookieName + "=" + late.id
            #expect(try await client.execute(uri: "/console/api/overview", method: .get, headers: [.cookie: cookie]).status == .unauthorized)
            // Open again, the same session is the visitor's.
            console.replaceAdmins([])
            #expect(try await client.execute(uri: "/console/api/overview", method: .get, headers: [.cookie: cookie]).status == .ok)
        }
    }

    /// Outside the sandbox no configuration opens the console to loopback clients.
    @Test func outsideTheSandboxNoReloadOpensIt() async throws {
        try await ConsoleSignInLimitTests.withConsole(limit: 5, sandbox: false, tokens: [.init(token: ConsoleSignInLimitTests.token)]) { (client, console) async throws in
            console.replaceAdmins([])
            #expect(!console.openToLoopback)
            #expect(try await client.execute(uri: "/console/api/overview", method: .get).status == .unauthorized)
        }
    }
}
