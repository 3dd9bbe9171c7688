import Foundation
import PushgateCore

/// Turns a `messages:send` answer (HTTP status and `{"code","msg","requestId"}`) into an outcome, for a
/// request to one token.
enum HMSResponseClassifier {
    enum Verdict: Equatable {
        case outcome(DeliveryOutcome)
        /// The access token was refused: fetch a new one and send once more.
        case renewAccessTokenAndRetry
    }

    static func classify(status: Int, body: Data, retryAfter: Duration?) -> Verdict {
        let answer = try? JSONDecoder().decode(Answer.self, from: body)
        let code = answer?.code ?? ""
        // Huawei's `msg` can list tokens (`illegal_tokens`), so reasons carry only the code and a fixed text.
        let reason = code.isEmpty ? "HTTP \(status)" : [code, Self.descriptions[code]].compactMap { $0 }.joined(separator: " ")
        switch code {
        case HMS.Code.success:
            return .outcome(.delivered)
        case HMS.Code.invalidTokens:
            return .outcome(.invalidToken(reason: reason))
        case HMS.Code.partialSuccess:
            // With one token, a partial success means the token was the illegal one.
            return .outcome(.invalidToken(reason: HMS.Code.partialSuccess + " illegal token"))
        case HMS.Code.authenticationError, HMS.Code.accessTokenExpired:
            return .renewAccessTokenAndRetry
        case HMS.Code.notAuthorized:
            // The app may not send (Push Kit not enabled for it): its credentials, not the notification.
            return .outcome(.credentialsRefused(reason: reason))
        case HMS.Code.oauthServiceFailure, HMS.Code.internalError:
            return .outcome(.retryLater(after: retryAfter, reason: reason))
        default:
            if status == 429 || status >= 500 { return .outcome(.retryLater(after: retryAfter, reason: reason)) }
            if status == 401 { return .renewAccessTokenAndRetry }
            return .outcome(.rejected(reason: reason))
        }
    }

    private struct Answer: Decodable {
        var code: String?
    }

    static let descriptions: [String: String] = [
        HMS.Code.parameterError: "request parameter error", HMS.Code.badMessage: "incorrect message structure",
        HMS.Code.authenticationError: "OAuth authentication error", HMS.Code.accessTokenExpired: "OAuth token expired",
        HMS.Code.notAuthorized: "the app is not authorized to send", HMS.Code.invalidTokens: "all tokens are invalid",
        HMS.Code.messageTooLarge: "the message is too large", HMS.Code.tokenCount: "wrong number of tokens",
        HMS.Code.oauthServiceFailure: "the OAuth service failed", HMS.Code.internalError: "internal error",
    ]
}
