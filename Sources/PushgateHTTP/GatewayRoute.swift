public import Hummingbird

/// One route of the gateway: a path, a method and the handler that answers it.
///
/// Routes are collected before the router is built, so the router knows every path's methods (for 405
/// answers) before any middleware runs.
public struct GatewayRoute: Sendable {
    /// The handler's type.
    public typealias Handler = @Sendable (Request, GatewayRequestContext) async throws -> Response
    /// Makes an error answer in the route's protocol's own shape from its status and message.
    public typealias ErrorAnswer = @Sendable (HTTPResponse.Status, String) -> Response

    /// The path, in Hummingbird's syntax (`/devices`, `/_matrix/push/v1/notify`).
    public let path: String
    /// The method answered.
    public let method: HTTPRequest.Method
    /// The handler.
    public let handler: Handler
    /// A larger body limit for this route than `http.max_request_body_size`, for protocols whose
    /// requests are large by nature (a Nextcloud server's batch); nil keeps the gateway's limit.
    public let maximumBodySize: Int?
    /// Whether the route answers now, for a route a reload turns on and off (its handler then answers 405
    /// itself); the `Allow` header of other methods' 405 lists the method only while it does.
    public let isAnswering: (@Sendable () -> Bool)?
    /// How the gateway's own refusals of a request to this path (a body over the limit, one that cannot be
    /// read) are shaped: the protocol's error body (gorush's `{"code","message"}`, Nextcloud's
    /// `{"error"}`); nil for the Matrix shape (`{"errcode","error"}`).
    public var errorAnswer: ErrorAnswer?

    /// Creates a route.
    public init(
        _ method: HTTPRequest.Method, _ path: String, maximumBodySize: Int? = nil, isAnswering: (@Sendable () -> Bool)? = nil,
        errorAnswer: ErrorAnswer? = nil, handler: @escaping Handler
    ) {
        self.method = method
        self.path = path
        self.maximumBodySize = maximumBodySize
        self.isAnswering = isAnswering
        self.errorAnswer = errorAnswer
        self.handler = handler
    }

    /// The route with the gateway's refusals shaped by `answer`.
    public func answeringErrors(with answer: @escaping ErrorAnswer) -> GatewayRoute {
        var route = self
        route.errorAnswer = answer
        return route
    }
}
