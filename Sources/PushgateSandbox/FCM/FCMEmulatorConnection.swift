import Foundation
import NIOCore
import NIOHTTP1
import PushgateCore

/// Answers the FCM emulator's HTTP/1 requests once they have ended: ``FCMEmulator/tokenReply(form:host:now:)``
/// for `POST /token`, ``FCMEmulator``'s send judgement for `POST /v1/projects/{project}/messages:send`.
/// A `slow…` token's answer is written by a task scheduled on the event loop after
/// ``FCMEmulator/slowDelay``.
final class FCMEmulatorConnectionHandler: SandboxHTTP1Handler {
    enum Route: Equatable {
        case token
        case send(project: String)
    }

    private let emulator: FCMEmulator

    init(emulator: FCMEmulator) {
        self.emulator = emulator
        super.init(maxBodySize: FCMEmulator.maxBodySize)
    }

    /// Routes the request, judges it and writes the answer.
    override func answer(_ head: HTTPRequestHead, body: ByteBuffer?, bodyTooLarge: Bool, context: ChannelHandlerContext) {
        let keepAlive = head.isKeepAlive
        guard let route = Self.route(head.uri) else {
            self.respond(status: 404, headers: Self.json, request: head, keepAlive: keepAlive, context: context)
            return
        }
        guard head.method == .POST else {
            self.respond(status: 405, headers: Self.json, request: head, keepAlive: keepAlive, context: context)
            return
        }
        if bodyTooLarge {
            self.respond(status: 413, headers: Self.json, request: head, keepAlive: false, context: context)
            return
        }
        switch route {
        case .token:
            let form = body.map { String(buffer: $0) } ?? ""
            let reply = self.emulator.tokenReply(form: form, host: head.headers.first(name: "host"))
            self.respond(reply, request: head, keepAlive: keepAlive, context: context)
        case .send(let project):
            let data = body.map { Data($0.readableBytesView) } ?? Data()
            let object = FCMEmulator.jsonObject(data)
            let token = FCMEmulator.token(of: FCMEmulator.messageObject(object))
            var headers: [String: String] = [:]
            if let contentType = head.headers.first(name: "content-type") { headers["content-type"] = contentType }
            if let userAgent = head.headers.first(name: "user-agent") { headers["user-agent"] = userAgent }
            let authorization = head.headers.first(name: "authorization")
            let emulator = self.emulator
            guard emulator.isSlow(token) else {
                let reply = emulator.sendReply(project: project, authorization: authorization, headers: headers, body: data, object: object, now: nil)
                self.respond(reply, request: head, keepAlive: keepAlive, context: context)
                return
            }
            // Judged and answered after the delay, on the event loop (NIO's pipeline handler holds any
            // pipelined request until this answer has ended).
            let delay = TimeAmount.nanoseconds(emulator.slowDelay.nanosecondsClamped)
            let loop = context.eventLoop.assumeIsolated()
            loop.scheduleTask(in: delay) {
                let reply = emulator.sendReply(project: project, authorization: authorization, headers: headers, body: data, object: object, now: nil)
                self.respond(reply, request: head, keepAlive: keepAlive, flushNow: true, context: context)
            }
        }
    }

    private static let json = [("content-type", "application/json; charset=UTF-8")]

    /// The route of `uri` (its query ignored): `/token`, `/v1/projects/{project}/messages:send`, else nil.
    static func route(_ uri: String) -> Route? {
        var uri = uri
        return uri.withUTF8 { bytes -> Route? in
            var path = bytes[...]
            if let query = path.firstIndex(of: UInt8(ascii: "?")) { path = path[..<query] }
            if path.elementsEqual("/token".utf8) { return .token }
            let prefix = "/v1/projects/".utf8
            let suffix = "/messages:send".utf8
            guard path.count > prefix.count + suffix.count, path.starts(with: prefix),
                path[(path.endIndex - suffix.count)...].elementsEqual(suffix)
            else { return nil }
            let project = path[(path.startIndex + prefix.count)..<(path.endIndex - suffix.count)]
            guard !project.contains(UInt8(ascii: "/")) else { return nil }
            let text = String(decoding: project, as: UTF8.self)
            return .send(project: project.contains(UInt8(ascii: "%")) ? (text.removingPercentEncoding ?? text) : text)
        }
    }

    private func respond(_ reply: FCMEmulatorReply, request: HTTPRequestHead, keepAlive: Bool, flushNow: Bool = false, context: ChannelHandlerContext) {
        var headers = Self.json
        if let retryAfter = reply.retryAfter { headers.append(("retry-after", retryAfter)) }
        self.respond(
            status: reply.status, headers: headers, body: Array(reply.body.utf8), request: request, keepAlive: keepAlive, flushNow: flushNow,
            context: context
        )
    }
}
