import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import PushgateCore
import PushgateProviderSupport
import PushgateSandbox
import PushgateTestSupport
import Testing

/// The emulator against Google's own client library (google-auth), run from the project's Python venv.
@Suite("FCM emulator against google-auth")
struct GoogleAuthCrossCheckTests {
    /// Prints `{"token": …, "assertion": …}` for the service-account file given as argv[1].
    static let script = """
        import json, sys
        import google.auth.transport.requests
        from google.oauth2 import service_account
        creds = service_account.Credentials.from_service_account_file(
            sys.argv[1], scopes=["https://www.googleapis.com/auth/firebase.messaging"])
        assertion = creds._make_authorization_grant_assertion()
        if isinstance(assertion, bytes):
            assertion = assertion.decode()
        creds.refresh(google.auth.transport.requests.Request())
        print(json.dumps({"token": creds.token, "assertion": assertion}))
        """

    /// Runs the interpreter named by `PUSHGATE_TEST_PYTHON`; the test fails when it is not set.
    static func runPython(arguments: [String]) async throws -> (status: Int32, output: String, errors: String) {
        let result = try await ExternalProcess.run(try PythonReference.interpreter(), arguments)
        return (result.status, result.output, result.errors)
    }

    static func postForm(_ form: String, to url: String) async throws -> (status: Int, body: String) {
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            var request = HTTPClientRequest(url: url)
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
            request.body = .bytes(ByteBuffer(string: form))
            let response = try await client.execute(request, timeout: .seconds(10))
            let body = try await response.body.collect(upTo: 64 * 1024)
            try await client.shutdown()
            return (Int(response.status.code), String(buffer: body))
        } catch {
            try? await client.shutdown()
            throw error
        }
    }

    @Test func googleAuthObtainsATokenTheEmulatorIssued() async throws {
        try await EmulatedFCM.run { fcm async throws in
            let result = try await Self.runPython(arguments: ["-c", Self.script, fcm.serviceAccountPath])
            #expect(result.status == 0, "python failed: \(result.errors)")
            let answer = try jsonObject(result.output)
            let token = try #require(answer["token"] as? String)
            let assertion = try #require(answer["assertion"] as? String)
            #expect(fcm.emulator.isValidAccessToken(token))
            #expect(fcm.emulator.issuedTokenCount == 1)

            // google-auth signs for Google's audience and names the key.
            let parts = assertion.split(separator: ".").map(String.init)
            #expect(parts.count == 3)
            let claimBytes = try #require(Base64URL.decode(parts[1]))
            let claims = try #require(try JSONSerialization.jsonObject(with: Data(claimBytes)) as? [String: Any])
            #expect(claims["aud"] as? String == "https://oauth2.googleapis.com/token")
            #expect(claims["iss"] as? String == fcm.emulator.clientEmail)
            let headerBytes = try #require(Base64URL.decode(parts[0]))
            let header = try #require(try JSONSerialization.jsonObject(with: Data(headerBytes)) as? [String: Any])
            #expect(header["kid"] as? String == fcm.emulator.privateKeyID)

            // The same assertion is accepted again; with its claims changed it is refused.
            let grant = "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion="
            let again = try await Self.postForm(grant + assertion, to: fcm.baseURL + "/token")
            #expect(again.status == 200)
            var changed = claims
            changed["iss"] = "intruder@example.iam.gserviceaccount.com"
            let forged = parts[0] + "." + Base64URL.encode(try JSONSerialization.data(withJSONObject: changed)) + "." + parts[2]
            let refused = try await Self.postForm(grant + forged, to: fcm.baseURL + "/token")
            #expect(refused.status == 400)
            #expect(refused.body.contains("invalid_grant"))
            #expect(fcm.emulator.issuedTokenCount == 2)

            // And the provider can send with its own token through the same emulator.
            #expect(await fcm.deliver(.sample(), to: "device-after-python") == .delivered)
        }
    }
}
