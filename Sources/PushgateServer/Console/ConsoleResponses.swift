import HTTPTypes
import Hummingbird
import NIOCore
import PushgateCore

/// The console's answers, each with the security headers every console response carries.
enum ConsoleResponses {
    static let contentSecurityPolicy =
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

    /// The headers of every console answer.
    static var securityHeaders: HTTPFields {
        var fields = HTTPFields()
        fields[HTTPField.Name("Content-Security-Policy")!] = Self.contentSecurityPolicy
        fields[HTTPField.Name("X-Frame-Options")!] = "DENY"
        fields[HTTPField.Name("Referrer-Policy")!] = "no-referrer"
        fields[HTTPField.Name("X-Content-Type-Options")!] = "nosniff"
        fields[.cacheControl] = "no-store"
        return fields
    }

    static func html(_ text: String, status: HTTPResponse.Status = .ok, extra: HTTPFields = [:]) -> Response {
        var headers = Self.securityHeaders
        headers[.contentType] = "text/html; charset=utf-8"
        headers.append(contentsOf: extra)
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    static func json(_ value: JSONValue, status: HTTPResponse.Status = .ok, extra: HTTPFields = [:]) -> Response {
        var headers = Self.securityHeaders
        headers[.contentType] = "application/json; charset=utf-8"
        headers.append(contentsOf: extra)
        let bytes = (try? value.encoded()) ?? Array(#"{"error":"the answer could not be written"}"#.utf8)
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    static func error(_ message: String, status: HTTPResponse.Status) -> Response {
        var extra = HTTPFields()
        if status == .unauthorized { extra[.wwwAuthenticate] = #"Bearer realm="pushgate-console""# }
        return Self.json(["error": .string(message)], status: status, extra: extra)
    }

    /// A 303 to `location` (a GET after a form's POST, or to the sign-in page).
    static func redirect(_ location: String, extra: HTTPFields = [:]) -> Response {
        var headers = Self.securityHeaders
        headers[.location] = location
        headers.append(contentsOf: extra)
        return Response(status: .seeOther, headers: headers)
    }

    static func asset(_ bytes: [UInt8], contentType: String) -> Response {
        var headers = Self.securityHeaders
        headers[.contentType] = contentType
        headers[.cacheControl] = "no-cache"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}
