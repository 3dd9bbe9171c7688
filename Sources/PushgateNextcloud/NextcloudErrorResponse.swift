import Foundation
import Hummingbird

/// The Nextcloud routes' error answers with a body: `{"error": "…"}` as JSON.
enum NextcloudErrorResponse {
    /// How long a server is asked to wait before trying again while the store is unavailable.
    static let retryAfterSeconds = 5

    /// An error answer with `message` in the body.
    static func response(_ status: HTTPResponse.Status, _ message: String) -> Response {
        let body = (try? JSONSerialization.data(withJSONObject: ["error": message])) ?? Data()
        return Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    /// 503 with `Retry-After`: the store did not answer in time or could not write; nothing was changed,
    /// and the request may be sent again.
    static var storeUnavailable: Response {
        var response = Self.response(.serviceUnavailable, "the store is not available; try again later")
        response.headers[.retryAfter] = String(Self.retryAfterSeconds)
        return response
    }
}
