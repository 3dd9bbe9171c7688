import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import Testing

/// A push service on 127.0.0.1 for the provider tests: it records every request and answers with the
/// status its path names (`/sub/ok` 201, `/sub/gone` 410, `/sub/missing` 404, `/sub/slow429` 429 with
/// `Retry-After: 7`, `/sub/error` 500, `/sub/big` 413, `/sub/timeout` 408, `/sub/bad` 400, `/sub/hang` after 5 s, `/sub/hold` 201
/// once the test calls ``Recorder/releaseHeld()``, which happens at the latest when the test ends).
enum PushServiceStub {
    struct RecordedRequest: Sendable {
        let path: String
        /// Header values by lowercase name.
        let headers: [String: String]
        let body: [UInt8]
    }

    actor Recorder {
        private(set) var requests: [RecordedRequest] = []
        /// The `/sub/hold` requests waiting for ``releaseHeld()``.
        private var held: [CheckedContinuation<Void, Never>] = []
        /// Whether ``releaseHeld()`` was called: a `/sub/hold` request arriving later is answered at once.
        private var released = false

        func record(_ request: RecordedRequest) { self.requests.append(request) }

        /// Waits until the test releases held requests: `/sub/hold` is answered when the test says so, not
        /// when a clock does.
        func hold() async {
            if self.released { return }
            await withCheckedContinuation { self.held.append($0) }
        }

        /// Lets every held request, and any that arrives later, be answered.
        func releaseHeld() {
            self.released = true
            for continuation in self.held { continuation.resume() }
            self.held = []
        }
    }

    static func withService(_ body: @Sendable (_ port: Int, _ recorder: Recorder) async throws -> Void) async throws {
        let recorder = Recorder()
        let router = Router()
        router.post("/sub/{name}") { request, context -> Response in
            let bytes = try await request.body.collect(upTo: 1 << 20)
            var headers: [String: String] = [:]
            for field in request.headers { headers[field.name.canonicalName] = field.value }
            await recorder.record(RecordedRequest(path: request.uri.path, headers: headers, body: Array(bytes.readableBytesView)))
            switch context.parameters.get("name") ?? "" {
            case "ok": return Response(status: .created)
            case "gone": return Response(status: .gone)
            case "missing": return Response(status: .notFound)
            case "slow429": return Response(status: .tooManyRequests, headers: [.retryAfter: "7"])
            case "error": return Response(status: .internalServerError, body: .init(byteBuffer: ByteBuffer(string: "upstream broke")))
            case "big": return Response(status: .contentTooLarge)
            case "timeout": return Response(status: .requestTimeout)
            // autopush's answer to a subscription made with another application server key (errno 109).
            case "mismatch":
                return Response(
                    status: .unauthorized,
                    body: .init(byteBuffer: ByteBuffer(string: #"{"code":401,"errno":109,"error":"Unauthorized","message":"Request did not validate Invalid Authorization Header"}"#)))
            case "bad": return Response(status: .badRequest, body: .init(byteBuffer: ByteBuffer(string: "bad\r\n\u{1b}[31mforged line\n" + String(repeating: "x", count: 10_000))))
            case "hang":
                try await Task.sleep(for: .seconds(5))
                return Response(status: .created)
            case "hold":
                await recorder.hold()
                return Response(status: .created)
            default: return Response(status: .notFound)
            }
        }
        var logger = Logger(label: "push-service-stub")
        logger.logLevel = .critical
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)), logger: logger)
        try await app.test(.live) { client in
            let port = try #require(client.port)
            // Held requests are released however the test ends, so the server can shut down.
            do {
                try await body(port, recorder)
            } catch {
                await recorder.releaseHeld()
                throw error
            }
            await recorder.releaseHeld()
        }
    }
}
