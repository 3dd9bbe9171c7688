import GRPCCore
import PushgateConfig
import PushgateCore
import SwiftProtobuf

/// gorush's `proto.Gorush/Send`, on the same path as `POST /api/push`. Unlike gorush, whose reply is
/// always `success: true`, `success` says whether every token was accepted (asynchronously: queued; with
/// `sync: true`: delivered), so a caller learns of failures, a notification FCM's checks refuse and one
/// for a platform no app serves included; `counts` is the number of tokens, as gorush
/// counts it. The `authorization` metadata carries the bearer token, as the HTTP header does.
struct GorushGRPCService: Proto_Gorush.ServiceProtocol {
    /// The HTTP route's callers' tokens and sender, as the last reload left them.
    let route: LiveValue<GorushPushRoute>

    func send(request: ServerRequest<Proto_NotificationRequest>, context: ServerContext) async throws -> ServerResponse<Proto_NotificationReply> {
        let authorization = request.metadata[stringValues: "authorization"].first { _ in true }
        let route = self.route.current
        let apps: Set<String>?
        switch route.authenticator.verdict(authorization: authorization) {
        case .allowed(let allowed): apps = allowed
        case .refused(let reason): throw RPCError(code: .unauthenticated, message: reason)
        }
        guard request.message.data.fields.values.allSatisfy(GorushGRPCRequest.isFinite) else {
            throw RPCError(code: .invalidArgument, message: "data holds a number that is not finite (NaN or infinity), which JSON cannot carry")
        }
        let notification = GorushGRPCRequest.notification(from: request.message)
        let result: GorushSender.Result
        do {
            result = try await route.sender.send([notification], allowedApps: apps)
        } catch {
            switch error {
            case .forbidden(let app): throw RPCError(code: .permissionDenied, message: "This token may not send through app \(app).")
            case .storeUnavailable: throw RPCError(code: .unavailable, message: "The store did not confirm the notification in time; it may still be delivered. Try again.")
            }
        }
        var reply = Proto_NotificationReply()
        reply.success = result.logs.isEmpty && result.dropped == 0
        reply.counts = Int32(clamping: notification.tokens.count)
        return ServerResponse(message: reply)
    }
}

/// gorush's `proto.Health/Check`: serving while the gateway runs.
struct GorushGRPCHealthService: Proto_Health.SimpleServiceProtocol {
    func check(request: Proto_HealthCheckRequest, context: ServerContext) async throws -> Proto_HealthCheckResponse {
        var response = Proto_HealthCheckResponse()
        response.status = .serving
        return response
    }
}
