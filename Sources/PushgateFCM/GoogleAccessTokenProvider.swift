public import AsyncHTTPClient
public import Foundation
import Logging
import NIOCore
import NIOHTTP1
import PushgateCore
import PushgateProviderSupport
public import _CryptoExtras

/// Obtains OAuth 2.0 access tokens for a Google service account with the JWT-bearer grant (RFC 7523), and
/// caches them.
///
/// A token is reused until five minutes before it expires. Concurrent callers share one refresh;
/// ``invalidate(_:)`` drops a token the provider refused so the next caller fetches a new one.
public final class GoogleAccessTokenProvider: Sendable {
    /// How long before expiry a cached token is replaced.
    public static let refreshMargin: TimeInterval = 300
    /// The lifetime asked for in assertions (Google's maximum).
    public static let assertionLifetime: Int64 = 3600
    /// The longest a token request may take, whatever the caller's deadline.
    public static let requestTimeout: Duration = .seconds(30)

    private let account: ServiceAccount
    private let key: _RSA.Signing.PrivateKey
    private let scope: String
    private let httpClient: HTTPClient
    private let now: @Sendable () -> Date

    private let cache: AccessTokenCache

    /// How many token requests were made (for tests and metrics).
    public var fetchCount: Int { self.cache.fetchCount }

    /// Creates a provider.
    /// - Parameters:
    ///   - account: the service account, whose `token_uri` receives the grant.
    ///   - key: its parsed private key.
    ///   - scope: the scope to ask for.
    ///   - httpClient: the client to post with (owned by the caller).
    ///   - now: the wall clock, injectable for tests.
    public init(
        account: ServiceAccount,
        key: _RSA.Signing.PrivateKey,
        scope: String = FCM.messagingScope,
        httpClient: HTTPClient,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.account = account
        self.key = key
        self.scope = scope
        self.httpClient = httpClient
        self.now = now
        self.cache = AccessTokenCache(refreshMargin: Self.refreshMargin, now: now)
    }

    /// A valid access token: the cached one, or a new one fetched before `deadline`.
    ///
    /// The refresh is shared by every caller that waits for it, so it runs under its own timeout, not the
    /// deadline of the caller that happened to start it: a delivery admitted with milliseconds left would
    /// otherwise fail the refresh for callers with seconds to spare.
    /// - Throws: ``AccessTokenError`` or a transport error when none can be obtained.
    public func token(deadline: ContinuousClock.Instant) async throws -> String {
        if let fresh = self.cache.freshToken() { return fresh }
        return try await self.cache.token(until: deadline) { try await self.requestToken() }
    }

    /// Forgets the cached token so the next call fetches a new one.
    /// - Parameter token: the token that was refused; when given, the cache is only dropped if it still
    ///   holds that token (so concurrent refusals cause one refresh).
    public func invalidate(_ token: String? = nil) {
        self.cache.invalidate(token)
    }

    /// Builds the signed assertion for a grant issued at `issuedAt`.
    public func assertion(issuedAt: Date) throws -> String {
        let iat = Int64(issuedAt.timeIntervalSince1970.rounded(.down))
        return try JSONWebToken.rs256(
            header: ["kid": self.account.privateKeyID],
            claims: [
                "iss": .string(self.account.clientEmail),
                "scope": .string(self.scope),
                "aud": .string(self.account.tokenURI),
                "iat": .integer(iat),
                "exp": .integer(iat + Self.assertionLifetime),
            ],
            key: self.key
        )
    }

    private func requestToken() async throws -> AccessTokenCache.Token {
        let issuedAt = self.now()
        // An RSA-2048 signature (about a millisecond): off the event loop a request may be answered on.
        let assertion = try await ComputePool.run { try self.assertion(issuedAt: issuedAt) }
        let body = FormEncoding.encode([
            ("grant_type", FCM.jwtBearerGrantType),
            ("assertion", assertion),
        ])
        var request = HTTPClientRequest(url: self.account.tokenURI)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.headers.add(name: "Accept", value: "application/json")
        request.body = .bytes(ByteBuffer(string: body))
        let response = try await self.httpClient.execute(request, deadline: ContinuousClock.now.advanced(by: Self.requestTimeout).nioDeadline)
        let bytes = try await response.body.collect(upTo: 64 * 1024)
        let data = Data(bytes.readableBytesView)
        guard response.status == .ok else {
            let reason = (try? JSONDecoder().decode(TokenErrorBody.self, from: data)).map { body in
                [body.error, body.errorDescription].compactMap { $0 }.joined(separator: ": ")
            }
            throw AccessTokenError("the token endpoint refused the grant: \(reason ?? "no error body")", status: Int(response.status.code))
        }
        guard let answer = try? JSONDecoder().decode(TokenBody.self, from: data), !answer.accessToken.isEmpty else {
            throw AccessTokenError("the token endpoint's answer has no access_token", status: Int(response.status.code))
        }
        return AccessTokenCache.Token(value: answer.accessToken, expiresAt: issuedAt.addingTimeInterval(TimeInterval(answer.expiresIn ?? 3600)))
    }

    private struct TokenBody: Decodable {
        var accessToken: String
        var expiresIn: Int?
        enum CodingKeys: String, CodingKey {
            case accessToken = "access_token"
            case expiresIn = "expires_in"
        }
    }

    private struct TokenErrorBody: Decodable {
        var error: String?
        var errorDescription: String?
        enum CodingKeys: String, CodingKey {
            case error
            case errorDescription = "error_description"
        }
    }
}
