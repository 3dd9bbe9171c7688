import Foundation
import PushgateNextcloudSDK
import PushgateTestSupport
import Testing

@Suite("pushTokenHash")
struct PushTokenHashTests {
    static let tokens = [
        // FCM registration token shape.
        "dGVzdC1kZXZpY2U:APA91bHun4MxP5egoKMwt2KZFBaFUH-1RYqx_zJ8",
        // Talk iOS: APNs and PushKit tokens, upper-case hex, one space.
        "8A3F2C1B0E9D8C7B6A5F4E3D2C1B0A9F8E7D6C5B4A3F2E1D0C9B8A7F6E5D4C3B 1F2E3D4C5B6A79880F1E2D3C4B5A69780F1E2D3C4B5A6978",
        "päß🚀+/=&",
        "",
    ]

    @Test func matchesPythonHashlib() async throws {
        let output = try await PythonReference.run(
            "import hashlib, json, sys\nprint(json.dumps([hashlib.sha512(t.encode('utf-8')).hexdigest() for t in sys.argv[1:]]))",
            arguments: Self.tokens
        )
        let expected = try JSONDecoder().decode([String].self, from: Data(output.utf8))
        #expect(expected.count == Self.tokens.count)
        #expect(Self.tokens.map(pushTokenHash) == expected)
    }

    @Test func isLowercaseHexOf128Characters() {
        for token in Self.tokens {
            #expect(ServerKeyRules.acceptsPushTokenHash(pushTokenHash(token)))
        }
        #expect(pushTokenHash("") == "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e")
        #expect(pushTokenHash("a") != pushTokenHash("A"))
    }
}
