@testable import PushgateSandbox
import Testing

@Suite("FCM emulator routes")
struct FCMEmulatorRouteTests {
    @Test(arguments: [
        ("/token", FCMEmulatorConnectionHandler.Route.token),
        ("/token?x=1", .token),
        ("/v1/projects/demo/messages:send", .send(project: "demo")),
        ("/v1/projects/demo/messages:send?alt=json", .send(project: "demo")),
        ("/v1/projects/my%2Dproject/messages:send", .send(project: "my-project")),
        ("/v1/projects/x/messages:send", .send(project: "x")),
    ] as [(String, FCMEmulatorConnectionHandler.Route)])
    func knownPaths(uri: String, route: FCMEmulatorConnectionHandler.Route) {
        #expect(FCMEmulatorConnectionHandler.route(uri) == route)
    }

    @Test(arguments: [
        "/", "", "/tokens", "/token/", "/v1/projects//messages:send", "/v1/projects/messages:send",
        "/v1/projects/a/b/messages:send", "/v1/projects/demo/messages:sen", "/v1/projects/demo/messages:send/",
        "/v1/project/demo/messages:send", "/v1/projects/demo/messages:send2", "?/token",
    ])
    func otherPaths(uri: String) {
        #expect(FCMEmulatorConnectionHandler.route(uri) == nil)
    }
}
