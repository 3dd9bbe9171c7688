import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import Testing

/// A push server on 127.0.0.1 for the back end's tests: it records every request as it came (the target
/// with its query string, the headers, the body) and answers with the status the path's second segment
/// names (`/up/404/…` answers 404; `/up/429…` adds `Retry-After: 7`); `/up/moved` answers 301 to
/// `/up/200/after-redirect`, `/up/small` answers 413 to a body over 150 bytes and 201 to a smaller one,
/// and `/up/hang` answers 201 after 5 seconds.
enum UnifiedPushEndpointStub {
    struct Recorded: Sendable {
        /// The request target as sent: path and query.
        let target: String
        /// Header values by lower-case name.
        let headers: [String: String]
        let body: [UInt8]
    }

    actor Recorder {
        private(set) var requests: [Recorded] = []
        func record(_ request: Recorded) { self.requests.append(request) }
    }

    static func withServer(_ body: @Sendable (_ port: Int, _ recorder: Recorder) async throws -> Void) async throws {
        let recorder = Recorder()
        let router = Router()
        router.post("/up/**") { request, _ -> Response in
            let bytes = try await request.body.collect(upTo: 1 << 20)
            var headers: [String: String] = [:]
            for field in request.headers { headers[field.name.canonicalName] = field.value }
            let target = request.head.path ?? ""
            await recorder.record(Recorded(target: target, headers: headers, body: Array(bytes.readableBytesView)))
            let path = target.split(separator: "?", maxSplits: 1).first.map(String.init) ?? ""
            let segments = path.split(separator: "/").map(String.init)
            let name = segments.count > 1 ? segments[1] : ""
            switch name {
            case "moved": return Response(status: .movedPermanently, headers: [.location: "/up/200/after-redirect"])
            case "small":
                return Response(status: bytes.readableBytes > 150 ? .contentTooLarge : .created)
            case "hang":
                try await Task.sleep(for: .seconds(5))
                return Response(status: .created)
            default:
                let code = Int(name) ?? 404
                var fields: HTTPFields = [:]
                if code == 429 || code == 503 { fields[.retryAfter] = "7" }
                return Response(status: HTTPResponse.Status(code: code), headers: fields)
            }
        }
        var logger = Logger(label: "unifiedpush-endpoint-stub")
        logger.logLevel = .critical
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)), logger: logger)
        try await app.test(.live) { client in
            try await body(try #require(client.port), recorder)
        }
    }
}
