import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import PushgateCore
import PushgateHTTP

/// Answers one collected request through the router, with the headers every answer carries (`Date`,
/// `Server`, `Content-Length`), in NIO's HTTP/1 shapes.
struct GatewayResponder: Sendable {
    /// An answer ready to write.
    struct Answer: Sendable {
        var head: HTTPResponseHead
        var body: ByteBuffer
    }

    private let respond: @Sendable (Request, GatewayRequestContext) async throws -> Response
    private let serverName: String
    private let dates: HTTPDateCache
    private let logger: Logger

    init<Responder: HTTPResponder>(responder: Responder, serverName: String, dates: HTTPDateCache, logger: Logger)
    where Responder.Context == GatewayRequestContext {
        self.respond = { request, context in try await responder.respond(to: request, context: context) }
        self.serverName = serverName
        self.dates = dates
        self.logger = logger
    }

    /// The answer to a request: the router's, a 400 for a head Swift HTTP Types refuses (an unknown
    /// method, say), or a 500 with no body for an error no middleware turned into an answer.
    func answer(_ head: HTTPRequestHead, body: RequestBody, channel: any Channel) async -> Answer {
        let isHead = head.method == .HEAD
        guard let request = Self.request(head) else {
            return self.bare(.badRequest, allocator: channel.allocator)
        }
        // Every log line of the request carries its id, as Hummingbird's own answering path tagged it.
        var logger = self.logger
        logger[metadataKey: "hb.request.id"] = .stringConvertible(GatewayRequestID())
        let context = GatewayRequestContext(source: ApplicationRequestContextSource(channel: channel, logger: logger))
        let response: Response
        do {
            response = try await self.respond(Request(head: request, body: body), context)
        } catch {
            logger.debug("http: an error reached the server", metadata: ["error.type": "\(type(of: error))"])
            return self.bare(.internalServerError, allocator: channel.allocator)
        }
        let collector = ResponseBodyCollector(allocator: channel.allocator)
        do {
            try await response.body.write(collector)
        } catch {
            logger.debug("http: an answer's body failed", metadata: ["error.type": "\(type(of: error))"])
            return self.bare(.internalServerError, allocator: channel.allocator)
        }
        // The fields as name and value pairs, made into `HTTPHeaders` at once: its `add` checks every name
        // byte by byte for ASCII (through a closure), which Swift HTTP Types' names already are.
        var fields: [(String, String)] = []
        fields.reserveCapacity(response.headers.count + 3)
        for field in response.headers where field.name != .date && field.name != .server {
            fields.append((field.name.rawName, field.value))
        }
        let status = response.status
        let mayHaveBody = status.code >= 200 && status.code != 204 && status.code != 304
        // A HEAD answer says the length the GET answer's body has (RFC 9110 §9.3.2), and carries none.
        if mayHaveBody, !response.headers.contains(.contentLength) {
            fields.append(("Content-Length", String(collector.buffer.readableBytes)))
        }
        let head = self.head(HTTPResponseStatus(statusCode: status.code, reasonPhrase: status.reasonPhrase), fields)
        return Answer(head: head, body: mayHaveBody && !isHead ? collector.buffer : channel.allocator.buffer(capacity: 0))
    }

    /// An answer with a status and no body.
    private func bare(_ status: HTTPResponseStatus, allocator: ByteBufferAllocator) -> Answer {
        Answer(head: self.head(status, [("Content-Length", "0")]), body: allocator.buffer(capacity: 0))
    }

    /// The head of an answer: `fields` (none of them `Date` or `Server`), then `Date` and `Server`.
    private func head(_ status: HTTPResponseStatus, _ fields: [(String, String)]) -> HTTPResponseHead {
        var fields = fields
        fields.append(("Date", self.dates.current()))
        fields.append(("Server", self.serverName))
        return HTTPResponseHead(version: .http1_1, status: status, headers: HTTPHeaders(fields))
    }

    /// The request head in Swift HTTP Types' shape, or nil when it has no such shape. An origin-form
    /// target (`/path?query`) is the path as it is; an absolute-form one (`http://host/path`) gives its
    /// path and query.
    static func request(_ head: HTTPRequestHead) -> HTTPRequest? {
        guard let method = HTTPRequest.Method(head.method.rawValue) else { return nil }
        let path: String
        if head.uri.utf8.first == UInt8(ascii: "/") || head.uri == "*" {
            path = head.uri
        } else if let components = AbsoluteFormTarget(head.uri) {
            path = components.pathAndQuery
        } else {
            return nil
        }
        var fields = HTTPFields()
        fields.reserveCapacity(head.headers.count)
        var authority: String?
        for header in head.headers {
            if authority == nil, ASCIICaseFolding.equals(header.name, "host") {
                authority = header.value
                continue
            }
            guard let name = HTTPField.Name(header.name) else { continue }
            fields.append(HTTPField(name: name, value: header.value))
        }
        return HTTPRequest(method: method, scheme: "http", authority: authority, path: path, headerFields: fields)
    }
}

/// Collects an answer's body into one buffer.
final class ResponseBodyCollector: ResponseBodyWriter {
    private(set) var buffer: ByteBuffer

    init(allocator: ByteBufferAllocator) {
        self.buffer = allocator.buffer(capacity: 0)
    }

    func write(_ buffer: ByteBuffer) async throws {
        if self.buffer.readableBytes == 0 {
            self.buffer = buffer
        } else {
            self.buffer.writeImmutableBuffer(buffer)
        }
    }

    func finish(_ trailingHeaders: HTTPFields?) async throws {}
}
