import Foundation
import NIOCore
import NIOHTTP1

/// Answers the Web Push emulator's HTTP/1 requests once they have ended: `POST /push/<id>` with
/// ``WebPushEmulator``'s judgement, and `GET /sandbox/deliveries` when given the log's JSON.
final class WebPushEmulatorConnectionHandler: SandboxHTTP1Handler {
    /// The largest request body read (larger ones are answered 413 without being judged).
    static let maxBodySize = 1 << 20

    private let emulator: WebPushEmulator
    private let origin: String
    private let deliveries: (@Sendable () -> [UInt8])?

    init(emulator: WebPushEmulator, origin: String, deliveries: (@Sendable () -> [UInt8])?) {
        self.emulator = emulator
        self.origin = origin
        self.deliveries = deliveries
        super.init(maxBodySize: Self.maxBodySize)
    }

    override func answer(_ head: HTTPRequestHead, body: ByteBuffer?, bodyTooLarge: Bool, context: ChannelHandlerContext) {
        let keepAlive = head.isKeepAlive
        var path = head.uri.utf8[...]
        if let query = path.firstIndex(of: UInt8(ascii: "?")) { path = path[..<query] }
        if let deliveries = self.deliveries, path.elementsEqual("/sandbox/deliveries".utf8) {
            guard head.method == .GET || head.method == .HEAD else {
                self.respond(status: 405, headers: [], body: [], request: head, keepAlive: keepAlive, context: context)
                return
            }
            self.respond(status: 200, headers: [("content-type", "application/json")], body: deliveries(), request: head, keepAlive: keepAlive, context: context)
            return
        }
        let prefix = "/push/".utf8
        let id = path.dropFirst(prefix.count)
        guard path.starts(with: prefix), !id.isEmpty, !id.contains(UInt8(ascii: "/")) else {
            self.respond(status: 404, headers: [], body: [], request: head, keepAlive: keepAlive, context: context)
            return
        }
        guard head.method == .POST else {
            self.respond(status: 405, headers: [], body: [], request: head, keepAlive: keepAlive, context: context)
            return
        }
        if bodyTooLarge {
            self.respond(status: 413, headers: [], body: [], request: head, keepAlive: false, context: context)
            return
        }
        let headers = head.headers
        let answer = self.emulator.judge(
            id: String(decoding: id, as: UTF8.self),
            body: body.map { Array($0.readableBytesView) } ?? [],
            header: { name in
                let values = headers[name]
                return values.isEmpty ? nil : values.count == 1 ? values[0] : values.joined(separator: ", ")
            },
            origin: self.origin
        )
        var extra: [(String, String)] = []
        if let retryAfter = answer.retryAfter { extra.append(("retry-after", retryAfter)) }
        if let location = answer.location { extra.append(("location", location)) }
        self.respond(status: answer.status, headers: extra, body: Array((answer.reason ?? "").utf8), request: head, keepAlive: keepAlive, context: context)
    }
}
