import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2
@testable import PushgateGorush
import PushgateCore
import PushgateTestSupport
import SwiftProtobuf
import Testing

/// gorush's gRPC API on the real binary, over HTTP/2 on loopback: `proto.Gorush/Send` with a bearer token
/// in the metadata reaches the sandbox's emulators as the HTTP API's notification would, the reply says
/// whether every token was delivered (sync mode), and `proto.Health/Check` answers SERVING.
@Suite("gorush gRPC API, end to end")
struct GorushGRPCEndToEndTests {
    @Test func sendAndHealthOverHTTP2() async throws {
        let directory = try TemporaryDirectory()
        let (gateway, _) = try await GorushEndToEndTests.start("""
              auth_tokens: [grpc-secret]
              sync: true
              grpc: {enabled: true, port: 0}
            """, directory: directory)
        let listeners = try await gateway.waitForListeners(count: 2)
        let grpcPort = try #require(listeners.first { $0.name == "grpc" }).port
        let httpPort = try #require(listeners.first { $0.name == "http" }).port

        try await withGRPCClient(
            transport: try .http2NIOPosix(target: .ipv4(address: "127.0.0.1", port: grpcPort), transportSecurity: .plaintext)
        ) { client in
            let gorush = Proto_Gorush.Client(wrapping: client)
            var request = Proto_NotificationRequest()
            request.platform = 1
            request.tokens = [String(repeating: "b7", count: 32)]
            request.message = "over gRPC"
            request.topic = "im.pushgate.sandbox"
            request.badge = 2
            request.priority = .high
            request.id = "g-1"
            request.data = try Google_Protobuf_Struct(jsonString: #"{"chatId":"0x07","n":1}"#)

            // Without the token: UNAUTHENTICATED, and nothing is sent.
            do {
                _ = try await gorush.send(request)
                Issue.record("a request without a token was served")
            } catch let error as RPCError {
                #expect(error.code == .unauthenticated)
            }
            let metadata: Metadata = ["authorization": "Bearer grpc-secret"]
            let reply = try await gorush.send(request, metadata: metadata)
            #expect(reply.success)
            #expect(reply.counts == 1)
            let delivered = try #require(try await NextcloudEndToEndTests.deliveries(httpPort).first { $0["token"]?.stringValue == request.tokens[0] })
            #expect(delivered["status"] == 200)
            #expect(delivered["headers"]?["apns-priority"] == "10")
            #expect(try GorushEndToEndTests.json(delivered["body"]?.stringValue ?? "") == GorushEndToEndTests.json(
                #"{"aps":{"alert":"over gRPC","badge":2},"chatId":"0x07","n":1}"#
            ))

            // A dead token: in sync mode the reply says the notification did not reach every token.
            request.tokens = ["dead" + String(repeating: "1", count: 60)]
            let failed = try await gorush.send(request, metadata: metadata)
            #expect(!failed.success)
            #expect(failed.counts == 1)

            // Sent nowhere, and so not a success: a topic FCM's checks refuse, and a platform (Huawei) no
            // app serves here.
            var refused = Proto_NotificationRequest()
            refused.platform = 2
            refused.tokens = ["android-token"]
            refused.message = "over gRPC"
            refused.topic = "bad topic!"
            #expect(try await gorush.send(refused, metadata: metadata).success == false)
            var unserved = Proto_NotificationRequest()
            unserved.platform = 3
            unserved.tokens = ["huawei-token"]
            unserved.message = "over gRPC"
            #expect(try await gorush.send(unserved, metadata: metadata).success == false)

            // NaN (or an infinity) in data, which JSON cannot carry: INVALID_ARGUMENT, not a store outage
            // to try again.
            var nan = request
            var value = Google_Protobuf_Value()
            value.numberValue = .nan
            nan.data = Google_Protobuf_Struct(fields: ["x": value])
            do {
                _ = try await gorush.send(nan, metadata: metadata)
                Issue.record("a NaN in data was served")
            } catch let error as RPCError {
                #expect(error.code == .invalidArgument)
            }

            let health = Proto_Health.Client(wrapping: client)
            #expect(try await health.check(Proto_HealthCheckRequest()).status == .serving)
        }
        gateway.signal(SIGTERM)
        #expect(await gateway.waitForExit(timeout: .seconds(60)) == 0)
    }
}
