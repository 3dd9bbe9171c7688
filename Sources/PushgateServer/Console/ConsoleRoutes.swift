import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import PushgateConfig
import PushgateCore
import PushgateHTTP

/// The operator console under `/console`: the sign-in page and its session, the overview page, the test
/// push, the JSON API and the page's two files; and `GET /` sent to `/console`.
///
/// A page without a session redirects to sign-in, an API call without a session or bearer token is 401
/// (and says nothing about the apps). A POST that changes something needs the session's CSRF token (a
/// bearer token needs none: it is not sent by the browser on its own); a read-only token cannot act.
struct ConsoleRoutes: Sendable {
    /// How often the page's script (console.js) asks for the overview again.
    static let refreshInterval: Duration = .seconds(5)

    static let cookieName = "pushgate_console"

    /// The admin tokens of the running configuration (a reload replaces them: ``replaceAdmins(_:)``).
    let admins: LiveValue<ConsoleAdmins>
    let sessions: ConsoleSessions
    let limiter: ConsoleSignInLimiter
    /// Whether this is the built-in sandbox, whose console admits loopback clients without a token while
    /// no admin token is configured (``openToLoopback``).
    let sandbox: Bool
    /// Whether `X-Forwarded-Proto: https` marks the request as TLS.
    let trustForwardedProto: Bool
    let overview: ConsoleOverviewSource
    let testPush: ConsoleTestPush
    let logger: Logger

    /// Who is asking, and through what.
    struct Caller: Sendable {
        var admin: ConsoleAdmins.Admin
        /// The session, when the request carried its cookie (or the sandbox started one).
        var session: ConsoleSessions.Session?
        /// Whether the request carried a bearer token (no CSRF token is needed then).
        var bearer: Bool
    }

    /// The JSON API's errors the gateway answers itself (a wrong method, a body over the limit) in the
    /// API's own shape, `{"error": …}`.
    static let apiErrorAnswer: GatewayRoute.ErrorAnswer = { status, message in ConsoleResponses.error(message, status: status) }

    var routes: [GatewayRoute] {
        [
            GatewayRoute(.get, "/") { _, _ in ConsoleResponses.redirect("/console") },
            GatewayRoute(.get, "/console") { request, context in await self.overviewPage(request, context: context) },
            GatewayRoute(.get, "/console/session") { request, context in self.signInPage(request, context: context) },
            GatewayRoute(.post, "/console/session", maximumBodySize: 16_384) { request, context in try await self.signIn(request, context: context) },
            GatewayRoute(.post, "/console/session/end", maximumBodySize: 16_384) { request, context in try await self.signOut(request, context: context) },
            GatewayRoute(.post, "/console/test-push", maximumBodySize: 65_536) { request, context in try await self.testPushForm(request, context: context) },
            GatewayRoute(.get, "/console/api/overview", errorAnswer: Self.apiErrorAnswer) { request, context in
                await self.apiOverview(request, context: context)
            },
            GatewayRoute(.post, "/console/api/test-push", maximumBodySize: 65_536, errorAnswer: Self.apiErrorAnswer) { request, context in
                try await self.apiTestPush(request, context: context)
            },
            GatewayRoute(.get, "/console/assets/console.js") { _, _ in
                ConsoleResponses.asset(PackageResources.console_js, contentType: "text/javascript; charset=utf-8")
            },
            GatewayRoute(.get, "/console/assets/console.css") { _, _ in
                ConsoleResponses.asset(PackageResources.console_css, contentType: "text/css; charset=utf-8")
            },
        ]
    }

    /// Takes a reloaded configuration's admin tokens. Sessions of a token that is no longer configured, or
    /// whose read-only flag changed, end at once.
    /// The sandbox's loopback visitors' sessions end too once the reloaded configuration has admin tokens;
    /// a change of the loopback access is logged.
    func replaceAdmins(_ tokens: [ConsoleSettings.AdminToken]) {
        let wasOpen = self.openToLoopback
        let admins = ConsoleAdmins(tokens)
        self.admins.replace(admins)
        let openToLoopback = self.sandbox && admins.isEmpty
        self.sessions.keep { session in admins.contains(session.admin) || (openToLoopback && Self.isSandboxVisitor(session.admin)) }
        if openToLoopback != wasOpen {
            self.logger.notice(openToLoopback ? Self.openNotice : "sandbox: the operator console now needs an admin token", metadata: ["path": "/console"])
        }
    }

    /// What the log says when the sandbox's console is open to loopback clients without a token.
    static let openNotice: Logger.Message = "sandbox: the operator console is open without a token to loopback clients"

    /// Whether loopback clients are admitted without a token: in the built-in sandbox while the running
    /// configuration (as last reloaded) has no admin token.
    var openToLoopback: Bool { self.sandbox && self.admins.current.isEmpty }

    // MARK: Who is asking

    static func clientAddress(_ context: GatewayRequestContext) -> String {
        context.remoteAddress?.ipAddress ?? "unknown"
    }

    /// The address failed sign-ins are counted against. Behind the TLS proxy `trust_forwarded_proto`
    /// names, every client reaches the gateway from the proxy's address, so five wrong tokens from anyone
    /// would refuse every admin; there it is the last `X-Forwarded-For` entry (the one the proxy added,
    /// not the client's own words before it), when the proxy sends one.
    static func signInAddress(peer: String, forwardedFor: String?, behindProxy: Bool) -> String {
        guard behindProxy, let last = ForwardedFor.lastEntry(forwardedFor) else { return peer }
        return last
    }

    static func isLoopback(_ address: String) -> Bool {
        address.hasPrefix("127.") || address == "::1" || address.hasPrefix("::ffff:127.")
    }

    /// The token of an `Authorization: Bearer …` header (the scheme in any case, RFC 9110 §11.1); nil for
    /// none or another scheme, which is not a try at the console's tokens.
    static func bearerToken(_ request: Request) -> String? {
        guard let authorization = request.headers.value(of: .authorization) else { return nil }
        let scheme = "bearer "
        guard authorization.utf8.count > scheme.utf8.count, authorization.prefix(scheme.count).lowercased() == scheme else { return nil }
        return String(authorization.dropFirst(scheme.count).drop { $0 == " " })
    }

    static func cookie(_ request: Request) -> String? {
        for field in request.headers where field.name == .cookie {
            for part in field.value.split(separator: ";") {
                let pair = part.drop { $0 == " " }
                if pair.hasPrefix(Self.cookieName + "=") { return String(pair.dropFirst(Self.cookieName.count + 1)) }
            }
        }
        return nil
    }

    /// The address failed sign-ins from `request` count against (``signInAddress(peer:forwardedFor:behindProxy:)``).
    func signInAddress(_ request: Request, context: GatewayRequestContext) -> String {
        Self.signInAddress(
            peer: Self.clientAddress(context), forwardedFor: request.headers[HTTPField.Name("X-Forwarded-For")!], behindProxy: self.trustForwardedProto
        )
    }

    /// Who sent a request, as ``identify(_:context:)`` finds.
    enum Identity {
        case caller(Caller)
        /// No admin: no token, session or sandbox visit, or a wrong bearer token.
        case nobody
        /// A bearer token from an address refused sign-ins (too many failures), not checked.
        case refused
    }

    /// Who sent `request`: a session's admin, a bearer token's, or the sandbox's loopback visitor. A bearer
    /// token is a sign-in: a wrong one counts against the address as a failed sign-in does, and an
    /// address refused sign-ins is refused with any token. An Authorization header of another scheme is
    /// not a try (a proxy's own credentials).
    func identify(_ request: Request, context: GatewayRequestContext) -> Identity {
        // A session's cookie first: a proxy in front (nginx's auth_basic, an OAuth proxy) may add an
        // Authorization header of its own to every request of a signed-in browser.
        // The sandbox's loopback visitor's session counts only while the console is open to it: one started
        // while a reload closed it (and ended the others) ends here.
        if let id = Self.cookie(request), let session = self.sessions.session(id: id),
            !Self.isSandboxVisitor(session.admin) || self.admitsLoopbackVisitor(request, context: context)
        {
            return .caller(Caller(admin: session.admin, session: session, bearer: false))
        }
        if let token = Self.bearerToken(request) {
            let address = self.signInAddress(request, context: context)
            guard self.limiter.begin(address) else { return .refused }
            guard let admin = self.admins.current.admin(presenting: token) else {
                self.logger.notice("console: failed sign-in with a bearer token", metadata: ["client": "\(address)"])
                return .nobody
            }
            self.limiter.succeeded(address)
            return .caller(Caller(admin: admin, session: nil, bearer: true))
        }
        if self.admitsLoopbackVisitor(request, context: context) {
            return .caller(Caller(admin: Self.sandboxVisitor, session: nil, bearer: false))
        }
        return .nobody
    }

    /// The admin the sandbox's loopback visitors act as.
    static let sandboxVisitor = ConsoleAdmins.Admin(fingerprint: "sandbox", readOnly: false)

    static func isSandboxVisitor(_ admin: ConsoleAdmins.Admin) -> Bool { admin.fingerprint == Self.sandboxVisitor.fingerprint }

    /// Whether the request comes from a loopback client while the console is open to them. A request
    /// that a proxy forwarded (`Forwarded`, `X-Forwarded-For`, `X-Real-IP`) is not a loopback visitor's,
    /// whatever address the proxy connects from: a reverse proxy on the same host must not open the
    /// sandbox's console to its clients.
    private func admitsLoopbackVisitor(_ request: Request, context: GatewayRequestContext) -> Bool {
        guard self.openToLoopback, Self.isLoopback(Self.clientAddress(context)) else { return false }
        return Self.forwardingFields.allSatisfy { request.headers[$0] == nil }
    }

    /// The fields a proxy adds to a request it forwards.
    private static let forwardingFields = ["Forwarded", "X-Forwarded-For", "X-Real-IP"].compactMap { HTTPField.Name($0) }

    /// The admin who sent `request` (``identify(_:context:)``), if any.
    func caller(_ request: Request, context: GatewayRequestContext) -> Caller? {
        if case .caller(let caller) = self.identify(request, context: context) { caller } else { nil }
    }

    /// The admin who sent an API request, or the answer to it without one: 429 from an address refused
    /// sign-ins, else 401.
    func apiCaller(_ request: Request, context: GatewayRequestContext) -> Result<Caller, ConsoleRefusal> {
        switch self.identify(request, context: context) {
        case .caller(let caller): .success(caller)
        case .nobody: .failure(ConsoleRefusal(response: ConsoleResponses.error(Self.unauthorizedMessage, status: .unauthorized)))
        case .refused:
            .failure(ConsoleRefusal(response: ConsoleResponses.error("too many failed sign-ins from this address; try again later", status: .tooManyRequests)))
        }
    }

    func isSecure(_ request: Request) -> Bool {
        self.trustForwardedProto && request.headers.value(of: HTTPField.Name("X-Forwarded-Proto")!)?.lowercased() == "https"
    }

    func sessionCookie(_ session: ConsoleSessions.Session, request: Request) -> HTTPFields {
        let seconds = self.sessions.lifetime.components.seconds
        var value = "\(Self.cookieName)=\(session.id); Path=/console; Max-Age=\(seconds); HttpOnly; SameSite=Strict"
        if self.isSecure(request) { value += "; Secure" }
        return [.setCookie: value]
    }

    func clearedCookie(request: Request) -> HTTPFields {
        var value = "\(Self.cookieName)=; Path=/console; Max-Age=0; HttpOnly; SameSite=Strict"
        if self.isSecure(request) { value += "; Secure" }
        return [.setCookie: value]
    }

    /// Whether a state-changing request may proceed: with a bearer token, or with its session's CSRF token.
    static func csrfAccepted(_ caller: Caller, presented: String?) -> Bool {
        if caller.bearer { return true }
        guard let session = caller.session, let presented else { return false }
        return ConsoleAdmins.constantTimeEqual(Array(session.csrfToken.utf8), Array(presented.utf8))
    }

    // MARK: Pages

    func overviewPage(_ request: Request, context: GatewayRequestContext) async -> Response {
        guard var caller = self.caller(request, context: context), !caller.bearer else { return ConsoleResponses.redirect("/console/session") }
        var extra = HTTPFields()
        // The sandbox's loopback visitor gets a session, so its forms carry a CSRF token like everyone's.
        if caller.session == nil {
            let session = self.sessions.start(for: caller.admin)
            caller.session = session
            extra = self.sessionCookie(session, request: request)
        }
        let overview = await self.overview.overview()
        return ConsoleResponses.html(ConsolePage.overview(overview, viewer: .init(admin: caller.admin, csrfToken: caller.session?.csrfToken, openToLoopback: self.openToLoopback)), extra: extra)
    }

    func signInPage(_ request: Request, context: GatewayRequestContext) -> Response {
        if let caller = self.caller(request, context: context), !caller.bearer { return ConsoleResponses.redirect("/console") }
        return ConsoleResponses.html(ConsolePage.signIn(message: nil))
    }

    func signIn(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let address = self.signInAddress(request, context: context)
        guard self.limiter.begin(address) else {
            self.logger.warning("console: sign-in refused, too many failures from this address", metadata: ["client": "\(address)"])
            return ConsoleResponses.html(ConsolePage.signIn(message: "Too many failed sign-ins from your address. Try again later."), status: .tooManyRequests)
        }
        let body = try await request.body.collect(upTo: 16_384)
        let fields = ConsoleForm.parse(Array(buffer: body))
        guard let token = fields["token"], let admin = self.admins.current.admin(presenting: token) else {
            self.logger.notice("console: failed sign-in", metadata: ["client": "\(address)"])
            return ConsoleResponses.html(ConsolePage.signIn(message: "That token is not an admin token."), status: .unauthorized)
        }
        self.limiter.succeeded(address)
        let session = self.sessions.start(for: admin)
        self.logger.notice("console: signed in", metadata: ["admin": "\(admin.fingerprint)", "read_only": "\(admin.readOnly)", "client": "\(address)"])
        return ConsoleResponses.redirect("/console", extra: self.sessionCookie(session, request: request))
    }

    func signOut(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let fields = ConsoleForm.parse(Array(buffer: try await request.body.collect(upTo: 16_384)))
        guard let caller = self.caller(request, context: context), let session = caller.session else {
            return ConsoleResponses.redirect("/console/session", extra: self.clearedCookie(request: request))
        }
        guard Self.csrfAccepted(caller, presented: fields["csrf"]) else { return ConsoleResponses.error("a CSRF token is missing or wrong", status: .forbidden) }
        self.sessions.end(id: session.id)
        return ConsoleResponses.redirect("/console/session", extra: self.clearedCookie(request: request))
    }

    func testPushForm(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        guard let caller = self.caller(request, context: context), !caller.bearer else { return ConsoleResponses.redirect("/console/session") }
        let fields = ConsoleForm.parse(Array(buffer: try await request.body.collect(upTo: 65_536)))
        guard Self.csrfAccepted(caller, presented: fields["csrf"]) else { return ConsoleResponses.error("a CSRF token is missing or wrong", status: .forbidden) }
        guard !caller.admin.readOnly else { return ConsoleResponses.error("a read-only token cannot send test pushes", status: .forbidden) }
        let result: ConsolePage.TestPushResult
        var status = HTTPResponse.Status.ok
        do {
            result = try await self.testPush.send(app: fields["app"] ?? "", token: fields["token"] ?? "", alert: fields["alert"] ?? "", admin: caller.admin)
        } catch {
            result = ConsolePage.TestPushResult(app: fields["app"] ?? "", outcome: "refused", reason: error.message)
            status = .badRequest
        }
        let overview = await self.overview.overview()
        return ConsoleResponses.html(
            ConsolePage.overview(overview, viewer: .init(admin: caller.admin, csrfToken: caller.session?.csrfToken, openToLoopback: self.openToLoopback), testPush: result), status: status
        )
    }

    // MARK: API

    static let unauthorizedMessage = "sign in at /console/session or send Authorization: Bearer ADMIN_TOKEN"

    func apiOverview(_ request: Request, context: GatewayRequestContext) async -> Response {
        if case .failure(let refusal) = self.apiCaller(request, context: context) { return refusal.response }
        return ConsoleResponses.json(await self.overview.overview().json)
    }

    func apiTestPush(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let caller: Caller
        switch self.apiCaller(request, context: context) {
        case .success(let admin): caller = admin
        case .failure(let refusal): return refusal.response
        }
        guard Self.csrfAccepted(caller, presented: request.headers.value(of: HTTPField.Name("X-CSRF-Token")!)) else {
            return ConsoleResponses.error("a CSRF token is missing or wrong (send the session's in X-CSRF-Token)", status: .forbidden)
        }
        guard !caller.admin.readOnly else { return ConsoleResponses.error("a read-only token cannot send test pushes", status: .forbidden) }
        let body = try await request.body.collect(upTo: 65_536)
        guard case .object(let fields)? = try? JSONParser.parse(Array(buffer: body)) else {
            return ConsoleResponses.error("the body must be a JSON object with app, token and alert", status: .badRequest)
        }
        let token: String
        switch fields["token"] {
        case .string(let text)?: token = text
        // A Web Push subscription given as an object: its JSON text is the token.
        case .object(let subscription)?: token = (try? JSONValue.object(subscription).encoded()).map { String(decoding: $0, as: UTF8.self) } ?? ""
        default: token = ""
        }
        do {
            let result = try await self.testPush.send(
                app: fields["app"]?.stringValue ?? "", token: token, alert: fields["alert"]?.stringValue ?? "", admin: caller.admin
            )
            var answer: [String: JSONValue] = ["app": .string(result.app), "outcome": .string(result.outcome)]
            if let reason = result.reason { answer["reason"] = .string(reason) }
            return ConsoleResponses.json(.object(answer))
        } catch {
            return ConsoleResponses.error(error.message, status: .badRequest)
        }
    }
}

/// The answer to an API request without an admin.
struct ConsoleRefusal: Error {
    let response: Response
}
