public import Hummingbird
import Foundation
import NIOCore

extension FCMEmulator {
    /// The largest request body the emulator reads (FCM's own limit is 4 KB of payload; bodies are JSON).
    static let maxBodySize = 1 << 20

    /// Adds `POST /token` and `POST /v1/projects/{project}/messages:send` to `router`.
    public func addRoutes<Context: RequestContext>(to router: Router<Context>) {
        router.post("/token") { request, _ -> Response in
            let body = try await request.body.collect(upTo: Self.maxBodySize)
            return Self.response(self.tokenReply(form: String(buffer: body), host: request.head.authority))
        }
        router.post("/v1/projects/:project/messages:send") { request, context -> Response in
            let project = context.parameters.get("project") ?? ""
            let body = try await request.body.collect(upTo: Self.maxBodySize)
            let data = Data(body.readableBytesView)
            let object = Self.jsonObject(data)
            let token = FCMEmulator.token(of: FCMEmulator.messageObject(object))
            if self.isSlow(token) { try await Task.sleep(for: self.slowDelay) }
            var headers: [String: String] = [:]
            for field in request.headers where ["content-type", "user-agent"].contains(field.name.canonicalName) {
                headers[field.name.canonicalName] = field.value
            }
            let authorization = request.headers[.authorization]
            return Self.response(self.sendReply(project: project, authorization: authorization, headers: headers, body: data, object: object, now: nil))
        }
    }

    /// A router with only the emulator's routes.
    public func buildRouter() -> Router<BasicRequestContext> {
        let router = Router()
        self.addRoutes(to: router)
        return router
    }

    private static func response(_ reply: FCMEmulatorReply) -> Response {
        var headers: HTTPFields = [.contentType: "application/json; charset=UTF-8"]
        if let retryAfter = reply.retryAfter { headers[.retryAfter] = retryAfter }
        return Response(
            status: HTTPResponse.Status(code: reply.status),
            headers: headers,
            body: ResponseBody(byteBuffer: ByteBuffer(string: reply.body))
        )
    }
}
