import _CryptoExtras
import Crypto
import Foundation

/// What a Nextcloud server sends to the proxy, built as nextcloud/notifications `Push.php` builds it: one
/// JSON entry per device (keys in its order, `/` escaped as `\/`), signed with the user's key over the
/// ciphertext bytes, posted as PHP `http_build_query` form fields `notifications[N]`.
enum NextcloudServerSide {
    /// One entry's JSON text.
    static func entry(
        user: NextcloudUser, pushToken: String, ciphertext: Data, priority: String = "normal", type: String = "alert",
        signature: String? = nil, deviceIdentifier: String? = nil
    ) -> String {
        let signature = signature ?? Self.sign(ciphertext, with: user.key)
        let fields: [(String, String)] = [
            ("deviceIdentifier", deviceIdentifier ?? user.deviceIdentifier),
            ("pushTokenHash", Self.sha512Hex(pushToken)),
            ("subject", ciphertext.base64EncodedString()),
            ("signature", signature),
            ("priority", priority),
            ("type", type),
        ]
        return "{" + fields.map { "\"\($0.0)\":\"\(Self.phpEscaped($0.1))\"" }.joined(separator: ",") + "}"
    }

    /// PKCS#1 v1.5 / SHA-512 over the raw bytes, base64, as `openssl_sign(..., OPENSSL_ALGO_SHA512)`.
    static func sign(_ data: Data, with key: _RSA.Signing.PrivateKey) -> String {
        (try? key.signature(for: SHA512.hash(data: data), padding: .insecurePKCS1v1_5).rawRepresentation.base64EncodedString()) ?? ""
    }

    /// Lowercase hex SHA-512, as PHP `hash('sha512', …)`.
    static func sha512Hex(_ text: String) -> String {
        SHA512.hash(data: Data(text.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// `json_encode` escapes `/` (and would escape non-ASCII, which these fields never hold).
    static func phpEscaped(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"").replacingOccurrences(of: "/", with: "\\/")
    }

    /// `http_build_query(['notifications' => $entries])`: RFC 1738 encoding, brackets escaped.
    static func form(_ entries: [String]) -> String {
        entries.enumerated().map { index, entry in "\(Self.urlencode("notifications[\(index)]"))=\(Self.urlencode(entry))" }.joined(separator: "&")
    }

    /// PHP `urlencode`: letters, digits and `-_.` stay, space becomes `+`, the rest `%XX`.
    static func urlencode(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."):
                out.append(Character(UnicodeScalar(byte)))
            case UInt8(ascii: " "): out.append("+")
            default: out += String(format: "%%%02X", byte)
            }
        }
        return out
    }

    /// A stand-in ciphertext: 256 random bytes, the size of a 2048-bit RSA block.
    static func randomCiphertext() -> Data {
        Data((0..<256).map { _ in UInt8.random(in: 0...255) })
    }
}
