import Foundation
import Hummingbird
import Logging
import PushgateConfig
import PushgateCore
import PushgateDelivery
import PushgateHTTP

/// `POST /api/push`: gorush's request and answers (see ``GorushSender`` for what happens to the
/// notifications).
struct GorushPushRoute: Sendable {
    let settings: GorushSettings
    let authenticator: GorushAuthenticator
    let sender: GorushSender

    func push(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        guard !self.settings.sync else { return try await self.answer(request, context: context) }
        // An asynchronous answer only reads the request and queues it: CPU and store work, no provider in
        // between. On the compute threads it leaves the event loop to the deliveries of what is queued (on the
        // loop, the outbox delivered a quarter less while senders kept sending, and the answers' p99 rose).
        return try await ComputePool.run { try await self.answer(request, context: context) }
    }

    private func answer(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        guard case .allowed(let apps) = self.authenticator.verdict(authorization: request.headers.value(of: .authorization)) else {
            if case .refused(let reason) = self.authenticator.verdict(authorization: request.headers.value(of: .authorization)) {
                return GorushResponse.error(.unauthorized, reason, headers: [.wwwAuthenticate: "Bearer"])
            }
            return GorushResponse.error(.unauthorized, "Unauthorized.")
        }
        guard let body = try await request.readableBody(upTo: context.maxUploadSize) else {
            return GorushResponse.error(.badRequest, "Missing notifications field.")
        }
        let notifications: [GorushNotification]
        do {
            notifications = try await ComputePool.run(readingBytes: body.readableBytes) { () throws(GorushRequestReader.Unreadable) in
                try GorushRequestReader.notifications(Array(body.readableBytesView))
            }
        } catch {
            context.logger.debug("gorush: unreadable push request", metadata: ["reason": "\(error.reason)"])
            return GorushResponse.error(.badRequest, "Missing notifications field.")
        }
        guard !notifications.isEmpty else { return GorushResponse.error(.badRequest, "Notifications field is empty.") }
        guard notifications.count <= self.settings.maxNotification else {
            return GorushResponse.error(.badRequest, "Number of notifications(\(notifications.count)) over limit(\(self.settings.maxNotification))")
        }
        let result: GorushSender.Result
        do {
            result = try await self.sender.send(notifications, allowedApps: apps)
        } catch {
            switch error {
            case .forbidden(let app):
                return GorushResponse.error(.forbidden, "This token may not send through app \(app).")
            case .storeUnavailable(let cause):
                context.logger.error("gorush: could not queue notifications", metadata: ["error": "\(cause)"])
                return GorushResponse.error(.serviceUnavailable, "The store did not confirm the notifications in time; some may still be delivered. Try again.", headers: [.retryAfter: "5"])
            }
        }
        context.logger.info(
            "gorush: push handled",
            metadata: ["notifications": "\(notifications.count)", "counts": "\(result.counts)", "failed": "\(result.logs.count)", "sync": "\(self.settings.sync)"]
        )
        return GorushResponse.accepted(counts: result.counts, logs: result.logs)
    }
}

