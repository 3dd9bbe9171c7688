import Foundation
import PushgateTestSupport
import Testing

/// The real binary against clients that send malformed, slow or unusual requests, over raw sockets (a
/// small Python client, so nothing between it and the gateway tidies the bytes up): each gets a clear
/// answer in the Matrix error shape or a closed connection, never a 500, and none is logged as an error.
@Suite("Hostile clients")
struct HostileClientTests {
    /// What the client script sends, one case per line of its output: `name`, the bytes sent, how long to
    /// wait; it prints what came back, and whether and when the server closed the connection.
    static let client = #"""
        import json, socket, sys, time
        port = int(sys.argv[1])
        def raw(data, wait, half_close=False):
            s = socket.create_connection(("127.0.0.1", port)); s.settimeout(wait)
            s.sendall(data)
            if half_close: s.shutdown(socket.SHUT_WR)
            started = time.time()
            out = b""; closed = None
            try:
                while True:
                    d = s.recv(65536)
                    if not d: closed = time.time() - started; break
                    out += d
            except socket.timeout: pass
            except ConnectionResetError: closed = time.time() - started
            s.close()
            return {"answer": out.decode("latin-1"), "closed_after": closed}
        cases = {
            "bad_chunk": raw(b"POST /_matrix/push/v1/notify HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\nzz\r\nabc\r\n0\r\n\r\n", 20),
            "bad_chunk_gorush": raw(b"POST /api/push HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\nzz\r\nabc\r\n0\r\n\r\n", 20),
            "bad_chunk_nextcloud": raw(b"POST /notifications HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n", 20),
            "bad_chunk_devices": raw(b"POST /devices HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n", 20),
            "delete_streamed_too_large": raw(b"DELETE /devices HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" + b"800\r\n" + b"a" * 2048 + b"\r\n" + b"800\r\n" + b"a" * 100, 20),
            "streamed_too_large": raw(b"POST /_matrix/push/v1/notify HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" + b"800\r\n" + b"a" * 2048 + b"\r\n" + b"800\r\n" + b"a" * 100, 20),
            "http10": raw(b"GET /health HTTP/1.0\r\n\r\n", 20),
            "connect": raw(b"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n", 20),
            "unknown_method": raw(b"FOO /health HTTP/1.1\r\nHost: x\r\n\r\n", 20),
            "garbage": raw(b"\x16\x03\x01\x00\xa5garbage\r\n\r\n", 20),
            "trickled_head": raw(b"GET /health HTTP/1.1\r\nHost: x\r\n", 30),
            "idle_keep_alive": raw(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n", 30),
            "trickled_body": raw(b"POST /_matrix/push/v1/notify HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{", 30),
        }
        # Three requests in one write: each is answered, in order, and the last one's "Connection: close"
        # ends the connection. Each Date header must be what Python's own IMF-fixdate writer gives for it.
        import email.utils
        pipelined = raw(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\nGET /nope HTTP/1.1\r\nHost: x\r\n\r\n"
                        b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 20)
        dates = [line[6:] for line in pipelined["answer"].split("\r\n") if line.startswith("Date: ")]
        pipelined["dates_exact"] = len(dates) == 3 and all(
            email.utils.formatdate(email.utils.parsedate_to_datetime(d).timestamp(), usegmt=True) == d
            and abs(email.utils.parsedate_to_datetime(d).timestamp() - time.time()) < 120 for d in dates)
        cases["pipelined"] = pipelined
        # Requests with bodies in one write, the second answered while the third waits behind it, then a
        # request that cannot be parsed: the three are answered in order, then the connection closes.
        notify = b'{"notification":{"devices":[{"app_id":"im.unknown","pushkey":"PK"}]}}'
        def post(key):
            body = notify.replace(b"PK", key)
            return (b"POST /_matrix/push/v1/notify HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
        # A client that closes its side after its request: answered, then the connection is closed at
        # once, not at the 3 s idle timeout.
        cases["half_closed"] = raw(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n", 20, half_close=True)
        cases["pipelined_bodies"] = raw(post(b"p1") + post(b"p2") + post(b"p3") + b"\x16\x03garbage\r\n\r\n", 20)
        # A client that waits for "100 Continue" before it sends its body (RFC 9110 §10.1.1), as curl and
        # Guzzle do for large bodies: the interim answer comes at once, then the body's own answer.
        s = socket.create_connection(("127.0.0.1", port)); s.settimeout(10)
        body = b'{"notification":{"devices":[{"app_id":"im.unknown","pushkey":"k1"}]}}'
        s.sendall(b"POST /_matrix/push/v1/notify HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  b"Expect: 100-continue\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n")
        def read_until(marker):
            out = b""
            try:
                while marker not in out:
                    d = s.recv(65536)
                    if not d: break
                    out += d
            except socket.timeout: pass
            return out
        interim = read_until(b"\r\n\r\n")
        s.sendall(body)
        final = read_until(b'"rejected"')
        s.close()
        cases["expect_continue"] = {"answer": interim.decode("latin-1"), "closed_after": None, "final": final.decode("latin-1")}
        # More connections than the cap, each sending nothing: the next is refused at once, and once they
        # are gone the gateway serves again.
        idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(int(sys.argv[2]) + 5)]
        time.sleep(1)
        cases["over_the_cap"] = raw(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 20)
        for s in idle: s.close()
        time.sleep(1)
        cases["after_the_cap"] = raw(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 20)
        print(json.dumps(cases))
        """#

    struct Outcome: Decodable {
        let answer: String
        let closed_after: Double?
        let dates_exact: Bool?
        let final: String?

        var status: Int? { self.answer.split(separator: " ", maxSplits: 2).dropFirst().first.flatMap { Int($0) } }
        var body: String { self.answer.components(separatedBy: "\r\n\r\n").dropFirst().joined(separator: "\r\n\r\n") }
        var responses: Int { self.answer.components(separatedBy: "HTTP/1.1 ").count - 1 }
    }

    @Test func malformedSlowAndUnusualRequestsGetClearAnswersAndClosedConnections() async throws {
        let directory = try TemporaryDirectory()
        let config = try directory.write("pushgate.yaml", """
            http: {bind_addresses: ['127.0.0.1'], port: 0, max_request_body_size: 1024, header_timeout: 2, body_timeout: 2, idle_timeout: 3, max_connections: 40}
            log: {format: json, level: info}
            database: {url: 'sqlite:store.sqlite'}
            gorush: {ios_app: demo.apns, allow_unauthenticated: true}
            nextcloud: {fcm_app: demo.fcm}
            """)
        let gateway = try GatewayProcess(arguments: ["serve", "--config", config], directory: directory.url.path)
        let port = try #require(try await gateway.waitForListeners().first).port
        let output: String
        do {
            output = try await PythonReference.run(Self.client, arguments: [String(port), "40"])
        } catch {
            Issue.record("the client failed: \(error)\n--- gateway log ---\n\(gateway.errors)")
            return
        }
        let cases = try JSONDecoder().decode([String: Outcome].self, from: Data(output.utf8))
        func outcome(_ name: String) throws -> Outcome { try #require(cases[name], "\(name) missing") }

        let badChunk = try outcome("bad_chunk")
        #expect(badChunk.status == 400, "\(badChunk.answer)")
        #expect(badChunk.body.contains(#""errcode":"M_BAD_JSON""#))

        // The same malformed body to the other protocols' routes: each answers in its own shape.
        let badChunkGorush = try outcome("bad_chunk_gorush")
        #expect(badChunkGorush.status == 400, "\(badChunkGorush.answer)")
        #expect(badChunkGorush.body == #"{"code":400,"message":"Missing notifications field."}"#, "\(badChunkGorush.answer)")
        #expect(badChunkGorush.answer.contains("\r\nX-GORUSH-VERSION: "), "\(badChunkGorush.answer)")
        let badChunkNextcloud = try outcome("bad_chunk_nextcloud")
        #expect(badChunkNextcloud.status == 400, "\(badChunkNextcloud.answer)")
        #expect(badChunkNextcloud.body == #"{"error":"the request body could not be read"}"#, "\(badChunkNextcloud.answer)")
        let badChunkDevices = try outcome("bad_chunk_devices")
        #expect(badChunkDevices.status == 400, "\(badChunkDevices.answer)")
        #expect(badChunkDevices.body.isEmpty, "\(badChunkDevices.answer)")
        let deleteTooLarge = try outcome("delete_streamed_too_large")
        #expect(deleteTooLarge.status == 413, "as a declared length over the limit is: \(deleteTooLarge.answer)")

        let tooLarge = try outcome("streamed_too_large")
        #expect(tooLarge.status == 413, "\(tooLarge.answer)")
        #expect(tooLarge.body.contains(#"{"errcode":"M_TOO_LARGE","error":"Request body too large"}"#))
        #expect(tooLarge.responses == 1, "one answer, then the connection closes: \(tooLarge.answer)")
        #expect(tooLarge.closed_after != nil)

        let http10 = try outcome("http10")
        #expect(http10.status == 200)
        #expect(http10.answer.contains("Connection: close"))
        #expect(try #require(http10.closed_after) < 10, "an HTTP/1.0 request without keep-alive closes after its answer")

        let connect = try outcome("connect")
        #expect(connect.status == 405, "\(connect.answer)")
        #expect(connect.closed_after != nil, "CONNECT leaves no tunnel open")

        let unknown = try outcome("unknown_method")
        #expect(unknown.status == 501, "\(unknown.answer)")
        #expect(unknown.body.contains(#""errcode":"M_UNRECOGNIZED""#))

        let garbage = try outcome("garbage")
        #expect(garbage.status == 400, "a method that is not a token is malformed: \(garbage.answer)")
        #expect(garbage.closed_after != nil)

        // Timeouts of 2 and 3 s close the connection; the client waited up to 30 s, so the upper bounds
        // only have to be far below that.
        let trickledHead = try outcome("trickled_head")
        #expect(trickledHead.answer.isEmpty)
        let headClosed = try #require(trickledHead.closed_after, "a head that never completes is closed")
        #expect(headClosed >= 1.5 && headClosed < 25)

        let idle = try outcome("idle_keep_alive")
        #expect(idle.status == 200)
        let idleClosed = try #require(idle.closed_after, "an idle keep-alive connection is closed")
        #expect(idleClosed >= 2.5 && idleClosed < 25)

        let trickledBody = try outcome("trickled_body")
        #expect(trickledBody.status == 408, "\(trickledBody.answer)")
        let bodyClosed = try #require(trickledBody.closed_after)
        #expect(bodyClosed >= 1.5 && bodyClosed < 25)

        let pipelined = try outcome("pipelined")
        let statuses = pipelined.answer.components(separatedBy: "HTTP/1.1 ").dropFirst().map { $0.prefix(3) }
        #expect(statuses == ["200", "404", "200"], "each pipelined request is answered, in order: \(pipelined.answer)")
        #expect(pipelined.closed_after != nil, "the last request asked to close")
        #expect(pipelined.dates_exact == true, "every Date header is an IMF-fixdate of about now: \(pipelined.answer)")
        let heads = pipelined.answer.components(separatedBy: "HTTP/1.1 ").dropFirst()
        #expect(heads.allSatisfy { $0.contains("\r\nServer: Pushgate\r\n") && $0.contains("\r\nContent-Length: ") }, "\(pipelined.answer)")

        let halfClosed = try outcome("half_closed")
        #expect(halfClosed.status == 200, "\(halfClosed.answer)")
        // `Connection: close` when the gateway saw the client's end of input before it answered; a busy
        // machine may answer first (the request and the end of input are two reads), and then the answer
        // has no Connection header. Either way the connection is closed at once, not at the idle timeout.
        let connectionHeaders = halfClosed.answer.components(separatedBy: "\r\n").filter { $0.lowercased().hasPrefix("connection:") }
        #expect(connectionHeaders.isEmpty || connectionHeaders == ["Connection: close"], "\(halfClosed.answer)")
        #expect(try #require(halfClosed.closed_after, "closed after the answer") < 2.5, "before the 3 s idle timeout")

        let bodies = try outcome("pipelined_bodies")
        let rejected = bodies.answer.components(separatedBy: "HTTP/1.1 ").dropFirst().map { answer in
            answer.hasPrefix("200 ") ? answer.components(separatedBy: "\r\n\r\n").last ?? "" : String(answer.prefix(3))
        }
        #expect(
            Array(rejected.prefix(3)) == [#"{"rejected":["p1"]}"#, #"{"rejected":["p2"]}"#, #"{"rejected":["p3"]}"#],
            "pipelined requests with bodies are answered whole and in order: \(bodies.answer)"
        )
        #expect(Array(rejected.dropFirst(3)) == ["400"], "the unparsable request is answered after them: \(bodies.answer)")
        #expect(bodies.closed_after != nil, "the unparsable request ends the connection")

        let expectContinue = try outcome("expect_continue")
        #expect(expectContinue.answer.hasPrefix("HTTP/1.1 100 Continue\r\n"), "\(expectContinue.answer)")
        #expect(expectContinue.final?.hasPrefix("HTTP/1.1 200 OK\r\n") == true, "\(expectContinue.final ?? "")")
        #expect(expectContinue.final?.hasSuffix(#"{"rejected":["k1"]}"#) == true, "an app nobody serves: its pushkey is rejected")

        let overTheCap = try outcome("over_the_cap")
        #expect(overTheCap.status == 503, "\(overTheCap.answer)")
        #expect(overTheCap.body.contains(#""errcode":"M_UNKNOWN""#))
        #expect(try outcome("after_the_cap").status == 200)

        // Nothing a client did is an error in the gateway's log, and nothing was answered 500.
        let events = gateway.logEvents
        // Each access-log line carries its request's own id.
        let requestIDs = events.filter { $0["msg"] == "handled request" }.map { $0["hb.request.id"] ?? "" }
        #expect(requestIDs.count >= 3 && !requestIDs.contains(""), "\(gateway.errors)")
        #expect(Set(requestIDs).count == requestIDs.count)
        #expect(!events.contains { $0["level"] == "error" || $0["level"] == "critical" }, "\(gateway.errors)")
        #expect(!gateway.errors.contains("HTTPParserError\",\"level\":\"error"))
        #expect(!cases.values.contains { $0.status == 500 })
    }

    @Test func theFileDescriptorLimitIsRaisedAtStart() async throws {
        let directory = try TemporaryDirectory()
        let config = try directory.write("pushgate.yaml", """
            http: {bind_addresses: ['127.0.0.1'], port: 0}
            log: {format: json, level: info}
            database: {url: 'sqlite:store.sqlite'}
            """)
        // A soft limit of 1,024 under a higher hard limit, as many systems start services.
        let script = "import resource, os, sys; h = resource.getrlimit(resource.RLIMIT_NOFILE)[1]; resource.setrlimit(resource.RLIMIT_NOFILE, (1024, h)); os.execv(sys.argv[1], sys.argv[1:])"
        let python = try PythonReference.interpreter()
        let gateway = try GatewayProcess(
            arguments: ["-c", script, GatewayProcess.binary, "serve", "--config", config], directory: directory.url.path, executable: python
        )
        _ = try await gateway.waitForListeners()
        let limit = try #require(gateway.logEvents.first { $0["msg"] == "file descriptor limit" }?["limit"].flatMap(Int.init))
        var hard = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &hard)
        #expect(limit == Int(min(hard.rlim_max, rlim_t(Int32.max))))
        #expect(limit > 1024 || hard.rlim_max <= 1024)
    }

    /// The real binary on a loopback port with SQLite in a new directory, and the port it listens on.
    static func serve(idleTimeout: Int) async throws -> (TemporaryDirectory, GatewayProcess, Int) {
        let directory = try TemporaryDirectory()
        let config = try directory.write("pushgate.yaml", """
            http: {bind_addresses: ['127.0.0.1'], port: 0, idle_timeout: \(idleTimeout)}
            log: {format: json, level: info}
            database: {url: 'sqlite:store.sqlite'}
            """)
        let gateway = try GatewayProcess(arguments: ["serve", "--config", config], directory: directory.url.path)
        let port = try #require(try await gateway.waitForListeners().first).port
        return (directory, gateway, port)
    }

    /// A client that pipelines requests and never reads the answers (a small receive window, 40-byte
    /// requests for a 72 KB answer each): the gateway reads no further once the answers cannot be written,
    /// closes the connection when it has stayed so for the idle timeout, and its memory stays bounded.
    /// Before, it went on reading and answering into memory (2.8 GB in 3 s in the release build) and
    /// never closed the connection. (What the client manages to send is the kernel's receive buffer.)
    @Test func aClientThatNeverReadsItsAnswersIsReadNoFurtherAndClosed() async throws {
        let (directory, gateway, port) = try await Self.serve(idleTimeout: 2)
        defer { withExtendedLifetime(directory) {} }
        let client = #"""
            import json, socket, sys, time
            s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.connect(("127.0.0.1", int(sys.argv[1]))); s.setblocking(False)
            request = b"GET /openapi.json HTTP/1.1\r\nHost: x\r\n\r\n"
            sent = 0; started = time.time(); reset = None
            while time.time() - started < 10:
                try: sent += s.send(request * 50)
                except BlockingIOError: time.sleep(0.01)
                except (BrokenPipeError, ConnectionResetError): reset = time.time() - started; break
            print(json.dumps({"requests_sent": sent // len(request), "reset_after": reset}))
            """#
        let output = try await PythonReference.run(client, arguments: [String(port)])
        let peak = (try? String(contentsOfFile: "/proc/\(gateway.processIdentifier)/status", encoding: .utf8))?
            .split(separator: "\n").first { $0.hasPrefix("VmHWM:") }
            .flatMap { Int($0.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") }
        struct Seen: Decodable {
            let requests_sent: Int
            let reset_after: Double?
        }
        let seen = try JSONDecoder().decode(Seen.self, from: Data(output.utf8))
        let resetAfter = try #require(seen.reset_after, "the gateway closes the connection (sent \(seen.requests_sent) requests)")
        #expect(resetAfter < 9, "closed after the idle timeout of being unwritable, not when the client gave up")
        let peakKiB = try #require(peak, "the gateway's peak resident memory")
        #expect(peakKiB < 400 * 1024, "peak \(peakKiB) KiB")
    }

    /// A kept-alive connection that sits idle when the gateway is told to stop is closed at once, and the
    /// gateway exits without waiting for its idle timeout (60 s here).
    @Test func anIdleKeptAliveConnectionIsClosedWhenTheGatewayStops() async throws {
        let (directory, gateway, port) = try await Self.serve(idleTimeout: 60)
        let marker = directory.url.appendingPathComponent("answered").path
        let client = #"""
            import json, socket, sys, time
            s = socket.create_connection(("127.0.0.1", int(sys.argv[1]))); s.settimeout(30)
            s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
            answer = b""
            while b"\r\n\r\n" not in answer: answer += s.recv(65536)
            open(sys.argv[2], "w").close()
            started = time.time(); closed = None
            try:
                while True:
                    d = s.recv(65536)
                    if not d: closed = time.time() - started; break
            except socket.timeout: pass
            except ConnectionResetError: closed = time.time() - started
            print(json.dumps({"status": answer.split(b" ")[1].decode(), "closed_after": closed}))
            """#
        async let output = PythonReference.run(client, arguments: [String(port), marker])
        let waitingSince = ContinuousClock.now
        while !FileManager.default.fileExists(atPath: marker), ContinuousClock.now - waitingSince < .seconds(20) {
            try await Task.sleep(for: .milliseconds(20))
        }
        gateway.signal(SIGTERM)
        let stopped = ContinuousClock.now
        let exit = await gateway.waitForExit(timeout: .seconds(20))
        let exitedAfter = ContinuousClock.now - stopped
        struct Seen: Decodable {
            let status: String
            let closed_after: Double?
        }
        let seen = try JSONDecoder().decode(Seen.self, from: Data(try await output.utf8))
        #expect(seen.status == "200")
        let closedAfter = try #require(seen.closed_after, "the idle connection is closed")
        #expect(closedAfter < 15, "closed when the gateway stopped, not at its idle timeout")
        #expect(exit == 0, "\(gateway.errors)")
        #expect(exitedAfter < .seconds(15), "the gateway does not wait for the idle connection")
    }
}
