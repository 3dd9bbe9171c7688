import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import PushgateProviderSupport

/// Huawei OAuth 2.0 access tokens (client-credentials grant with the app id and secret), cached until
/// five minutes before they expire; concurrent callers share one refresh, and a token the push server
/// refuses is dropped with ``invalidate(_:)``.
final class HMSAccessTokens: Sendable {
    /// Why no token could be had.
    struct Failure: Error, CustomStringConvertible {
        let description: String
        /// The token endpoint's status, when it answered.
        let status: Int?
    }

    private static let refreshMargin: TimeInterval = 300
    private static let requestTimeout: Duration = .seconds(30)

    private let tokenURL: String
    private let clientID: String
    private let clientSecret: String
    private let httpClient: HTTPClient
    private let cache = AccessTokenCache(refreshMargin: HMSAccessTokens.refreshMargin)
    /// Token requests made (tests).
    var fetchCount: Int { self.cache.fetchCount }

    init(tokenURL: String, clientID: String, clientSecret: String, httpClient: HTTPClient) {
        self.tokenURL = tokenURL
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.httpClient = httpClient
    }

    func token(deadline: ContinuousClock.Instant) async throws -> String {
        if let fresh = self.cache.freshToken() { return fresh }
        // The refresh is shared by every waiting caller: its own timeout bounds it, not the deadline of
        // the caller that started it (each caller stops waiting at its own).
        return try await self.cache.token(until: deadline) { try await self.request() }
    }

    func invalidate(_ token: String) {
        self.cache.invalidate(token)
    }

    private func request() async throws -> AccessTokenCache.Token {
        let allowed = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        let escape = { (text: String) in text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text }
        var request = HTTPClientRequest(url: self.tokenURL)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.body = .bytes(ByteBuffer(string: "grant_type=client_credentials&client_id=\(escape(self.clientID))&client_secret=\(escape(self.clientSecret))"))
        let issuedAt = Date()
        let response = try await self.httpClient.execute(request, deadline: (ContinuousClock.now + Self.requestTimeout).nioDeadline)
        let body = Data(try await response.body.collect(upTo: 64 * 1024).readableBytesView)
        let status = Int(response.status.code)
        let answer = try? JSONDecoder().decode(Answer.self, from: body)
        guard status == 200, let value = answer?.accessToken, !value.isEmpty else {
            // Huawei's error bodies carry a numeric `error` and `error_description`; neither holds the secret.
            let detail = [answer?.error.map { "error \($0)" }, answer?.errorDescription].compactMap { $0 }.joined(separator: ": ")
            throw Failure(description: "the token endpoint refused the grant (HTTP \(status)\(detail.isEmpty ? "" : ", \(detail)"))", status: status)
        }
        return AccessTokenCache.Token(value: value, expiresAt: issuedAt.addingTimeInterval(TimeInterval(answer?.expiresIn ?? 3600)))
    }

    private struct Answer: Decodable {
        var accessToken: String?
        var expiresIn: Int?
        var error: Int?
        var errorDescription: String?

        enum CodingKeys: String, CodingKey {
            case accessToken = "access_token"
            case expiresIn = "expires_in"
            case error
            case errorDescription = "error_description"
        }
    }
}
