import Foundation
import Hummingbird
import HummingbirdTesting
import HTTPTypes
import NIOCore
@testable import PushgateSandbox
import Testing

/// The distributor emulator: what it accepts and records, and the failures its special endpoints make.
@Suite("UnifiedPush emulator")
struct UnifiedPushEmulatorTests {
    static let base = "http://127.0.0.1:9"

    static func judge(_ emulator: UnifiedPushEmulator, _ endpoint: String, body: String = #"{"notification":{"event_id":"$e"}}"#) -> Int {
        let url = URL(string: endpoint)!
        let id = url.path.split(separator: "/").last.map(String.init) ?? ""
        let headers = ["ttl": "86400", "content-encoding": "aes128gcm"]
        return emulator.judge(id: id, query: url.query, body: Array(body.utf8), header: { headers[$0] }, baseURL: Self.base).status
    }

    @Test func anIssuedEndpointTakesAMessageExactlyAndRecordsWhatTheAppReceives() throws {
        let log = SandboxDeliveryLog()
        let emulator = UnifiedPushEmulator(log: log)
        let endpoint = emulator.issue(baseURL: Self.base)
        #expect(endpoint.hasPrefix("\(Self.base)/up/") && endpoint.hasSuffix("?up=1"))
        #expect(Self.judge(emulator, endpoint) == 201)
        let delivery = try #require(log.all.last)
        #expect(delivery.provider == "unifiedpush")
        #expect(delivery.body == #"{"notification":{"event_id":"$e"}}"#)
        #expect(delivery.headers == ["ttl": "86400", "content-encoding": "aes128gcm"])
        // The query string is part of the endpoint: without it the endpoint is unknown.
        #expect(Self.judge(emulator, endpoint.replacingOccurrences(of: "?up=1", with: "")) == 404)
        #expect(Self.judge(emulator, "\(Self.base)/up/never-issued?up=1") == 404)
        // 1 to 4096 bytes.
        #expect(Self.judge(emulator, endpoint, body: String(repeating: "x", count: 4097)) == 413)
        #expect(Self.judge(emulator, endpoint, body: "") == 413)
        #expect(Self.judge(emulator, endpoint, body: String(repeating: "x", count: 4096)) == 201)
    }

    @Test(arguments: [("gone", 404), ("expired", 410), ("throttled", 429), ("failing", 500), ("moved", 301)])
    func specialEndpointsMakeEachFailure(_ id: String, _ status: Int) {
        let emulator = UnifiedPushEmulator(log: SandboxDeliveryLog())
        #expect(Self.judge(emulator, "\(Self.base)/up/\(id)?up=1") == status)
    }

    @Test func theIssuerAndTheEndpointsAnswerOverHTTP() async throws {
        let emulator = UnifiedPushEmulator(log: SandboxDeliveryLog())
        let router = Router()
        emulator.addRoutes(to: router) { "http://127.0.0.1:9" }
        let app = Application(router: router)
        try await app.test(.router) { client in
            let issued = try await client.execute(uri: "/sandbox/unifiedpush/endpoints", method: .post)
            #expect(issued.status == .created)
            let object = try JSONSerialization.jsonObject(with: Data(String(buffer: issued.body).utf8)) as? [String: String]
            let text = try #require(object?["endpoint"])
            let endpoint = try #require(URL(string: text))
            let target = endpoint.path + "?" + (endpoint.query ?? "")
            #expect(try await client.execute(uri: target, method: .post, body: ByteBuffer(string: "{}")).status == .created)
            let throttled = try await client.execute(uri: "/up/throttled?up=1", method: .post, body: ByteBuffer(string: "{}"))
            #expect(throttled.status == .tooManyRequests)
            #expect(throttled.headers[.retryAfter] == "7")
        }
    }
}
