import Hummingbird
import PushgateHTTP
import Logging
import NIOCore
import NIOHTTP1
import PushgateStore

/// Turns every error into a response in a known shape, so no request ends in a dropped connection or a
/// framework default: protocol errors (any `HTTPResponseError` a front end throws) pass through; unknown
/// paths get 404 `M_UNRECOGNIZED`, and known paths with the wrong method 405 in their protocol's shape
/// (`M_UNRECOGNIZED` for Matrix's and the gateway's own); a body over the limit
/// gets 413; a store outage 503; anything else is logged and answered 500.
struct ErrorAnswers: Sendable {
    /// The methods each route path answers, for 405 and its `Allow` header.
    let routeMethods: RouteMethods

    /// The answer to `error`, thrown while answering `request`.
    /// - Throws: only when the answer itself cannot be encoded.
    func response(to error: any Error, request: Request, context: GatewayRequestContext) throws -> Response {
        switch error {
        case let error as HTTPError:
            switch error.status {
            case .notFound where context.endpointPath == "NotFound" || context.endpointPath == nil:
                if let methods = self.routeMethods.methods(forPath: request.uri.path) {
                    let unrecognized = GatewayErrorBody.unrecognized
                    var body = GatewayErrorBody(status: .methodNotAllowed, errcode: unrecognized.errcode, message: unrecognized.message)
                    body.headers[.allow] = methods.map(\.rawValue).joined(separator: ", ")
                    return try self.answer(body, request: request, context: context)
                }
                return try GatewayErrorBody.unrecognized.response(from: request, context: context)
            case .contentTooLarge:
                return try self.answer(GatewayErrorBody.tooLarge, request: request, context: context)
            default:
                let message = error.body ?? error.status.reasonPhrase
                return try GatewayErrorBody(status: error.status, errcode: Self.errcode(for: error.status), message: message)
                    .response(from: request, context: context)
            }
        case is NIOTooManyBytesError:
            // A streamed body over the limit: the same answer as a declared one.
            return try self.answer(GatewayErrorBody.tooLarge, request: request, context: context)
        case let error as HTTPParserError:
            // The client sent a body that cannot be parsed (or went away mid-body): its mistake, not ours.
            context.logger.debug("request body could not be read", metadata: ["error": "\(error)"])
            return try self.answer(
                GatewayErrorBody(status: .badRequest, errcode: "M_BAD_JSON", message: "Malformed HTTP request body"), request: request, context: context
            )
        case let error as ChannelError:
            context.logger.debug("the client went away", metadata: ["error": "\(error)"])
            return try self.answer(
                GatewayErrorBody(status: .badRequest, errcode: "M_UNKNOWN", message: "The connection closed before the request was read"),
                request: request, context: context
            )
        case let error as any HTTPResponseError:
            return try error.response(from: request, context: context)
        case let error as StoreError:
            // A route without its own answer for a store outage: 503, so the client tries again.
            context.logger.warning("request failed: the store is not available", metadata: ["error": "\(error)"])
            var body = GatewayErrorBody(status: .serviceUnavailable, errcode: "M_UNKNOWN", message: "The store is not available; try again later")
            body.headers[.retryAfter] = "5"
            return try body.response(from: request, context: context)
        default:
            context.logger.error("request failed", metadata: ["error": "\(String(reflecting: type(of: error)))"])
            return try GatewayErrorBody.internalError.response(from: request, context: context)
        }
    }

    /// `body` in the shape of the protocol the request's path belongs to (``GatewayRoute/errorAnswer``),
    /// else in the Matrix shape.
    private func answer(_ body: GatewayErrorBody, request: Request, context: GatewayRequestContext) throws -> Response {
        if let shaped = self.routeMethods.errorAnswer(forPath: request.uri.path) {
            var response = shaped(body.status, body.message)
            for field in body.headers { response.headers.append(field) }
            return response
        }
        return try body.response(from: request, context: context)
    }

    private static func errcode(for status: HTTPResponse.Status) -> String {
        switch status.code {
        case 400: "M_BAD_JSON"
        case 401, 403: "M_FORBIDDEN"
        case 404, 405: "M_UNRECOGNIZED"
        case 413: "M_TOO_LARGE"
        case 429: "M_LIMIT_EXCEEDED"
        default: "M_UNKNOWN"
        }
    }
}
