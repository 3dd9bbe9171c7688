import Foundation
import Logging
import PushgateCore
@testable import PushgateServer
import Testing

/// The gateway's log lines: their time stamps, their text form, and the writer that keeps the event loops
/// from waiting for standard error.
@Suite("Log lines")
struct LogLineWriterTests {
    /// A pipe whose read end the test drains.
    final class Pipe: @unchecked Sendable {
        let readEnd: Int32
        let writeEnd: Int32

        init() throws {
            var ends: [Int32] = [0, 0]
            try #require(pipe(&ends) == 0)
            self.readEnd = ends[0]
            self.writeEnd = ends[1]
        }

        deinit {
            close(self.readEnd)
            close(self.writeEnd)
        }

        /// Reads until `count` bytes arrived or `deadline` passed.
        func read(count: Int, until deadline: ContinuousClock.Instant) -> String {
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while received.count < count, ContinuousClock.now < deadline {
                var poller = pollfd(fd: self.readEnd, events: Int16(POLLIN), revents: 0)
                guard poll(&poller, 1, 50) > 0 else { continue }
                let got = buffer.withUnsafeMutableBytes { Glibc.read(self.readEnd, $0.baseAddress, $0.count) }
                if got > 0 { received += buffer[..<got] }
            }
            return String(decoding: received, as: UTF8.self)
        }
    }

    @Test(arguments: [
        (0, 0), (951_782_400, 7), (1_709_164_799, 999), (1_764_346_205, 123), (4_102_444_800, 500),
    ])
    func timeStampsReadAsFoundationWritesThem(seconds: Int, milliseconds: Int) {
        var bytes: [UInt8] = []
        LogTimestamp.append(seconds: seconds, milliseconds: milliseconds, to: &bytes)
        let date = Date(timeIntervalSince1970: Double(seconds) + Double(milliseconds) / 1000 + 0.0001)
        #expect(String(decoding: bytes, as: UTF8.self) == date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
    }

    @Test func aTextLineHasTheTimeTheLevelTheLoggerTheMessageAndSortedMetadata() throws {
        let event = LogEvent(
            level: .info, message: "handled request", metadata: nil, source: "test", file: #fileID, function: #function, line: #line
        )
        let line = String(decoding: GatewayLogHandler.textLine(label: "pushgate", event: event, fields: GatewayLogHandler.fields(["route": "/x", "a": "1"], nil)), as: UTF8.self)
        let pattern = #/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z INFO pushgate: handled request a=1 route=/x$/#
        #expect(line.wholeMatch(of: pattern) != nil, "\(line)")
        // Values that are not strings are written as they describe themselves; the logger's and the
        // event's metadata together, sorted by key.
        let mixed = String(
            decoding: GatewayLogHandler.textLine(
                label: "pushgate", event: event,
                fields: GatewayLogHandler.fields(["id": .stringConvertible(GatewayRequestID(number: 10))], ["n": .array(["1", "é"]), "b": "ü x"])
            ),
            as: UTF8.self
        )
        #expect(mixed.hasSuffix(" INFO pushgate: handled request b=ü x id=\(GatewayRequestID.prefix)000000000000000a n=\(Logger.MetadataValue.array(["1", "é"]).description)"), "\(mixed)")
        let json = try JSONSerialization.jsonObject(
            with: Data(GatewayLogHandler.jsonLine(label: "pushgate", event: event, fields: GatewayLogHandler.fields(["route": "/x", "msg": "not this"], nil)))
        ) as? [String: String]
        #expect(json?["msg"] == "handled request")
        #expect(json?["route"] == "/x")
        #expect(json?["level"] == "info")
        #expect(json?["ts"]?.hasSuffix("Z") == true)
    }

    @Test func fieldsGivenAsTheyAreMakeTheLinesMetadataMakes() throws {
        let event = LogEvent(
            level: .info, message: "handled request", metadata: nil, source: "test", file: #fileID, function: #function, line: #line
        )
        let logger: Logger.Metadata = ["hb.request.id": .stringConvertible(GatewayRequestID(number: 0xfe)), "route": "the logger's", "z": "1"]
        let given: [GatewayLogHandler.Field] = [
            .init(key: "client", value: "127.0.0.1"), .init(key: "method", value: "POST"), .init(key: "route", value: "/_matrix/push/v1/notify"),
            .init(key: "status", value: "200"), .init(key: "ms", value: "0.25"),
        ]
        var metadata = Logger.Metadata()
        for field in given { metadata[field.key] = field.value }
        // Without the time stamp (the lines are made a moment apart).
        func text(_ fields: [GatewayLogHandler.Field]) -> Substring {
            String(decoding: GatewayLogHandler.textLine(label: "pushgate", event: event, fields: fields), as: UTF8.self).drop { $0 != " " }
        }
        func json(_ fields: [GatewayLogHandler.Field]) throws -> [String: String]? {
            var object = try JSONSerialization.jsonObject(with: Data(GatewayLogHandler.jsonLine(label: "pushgate", event: event, fields: fields))) as? [String: String]
            object?["ts"] = nil
            return object
        }
        let direct = GatewayLogHandler.fields(logger, given: given)
        let merged = GatewayLogHandler.fields(logger, metadata)
        #expect(text(direct) == text(merged))
        #expect(text(direct) == " INFO pushgate: handled request client=127.0.0.1 hb.request.id=\(GatewayRequestID.prefix)00000000000000fe method=POST ms=0.25 route=/_matrix/push/v1/notify status=200 z=1")
        #expect(try json(direct) == json(merged))
        #expect(try json(direct)?["route"] == "/_matrix/push/v1/notify")
    }

    @Test(arguments: [
        ["route": "/x"] as Logger.Metadata,
        ["msg": "not this", "ts": "nor this", "a\"b": "q\"uote \\ back\nnew\u{1}ctl é ü 😀 /slash"],
        ["id": .stringConvertible(GatewayRequestID(number: 0xabc)), "list": .array(["1", "é"]), "nested": .dictionary(["k": "v"])],
        ["clé": "a key outside ASCII", "b": "2"],
    ])
    func aJSONLineIsTheObjectJSONTextWrites(metadata: Logger.Metadata) throws {
        let event = LogEvent(
            level: .warning, message: "a \"message\"", metadata: nil, source: "test", file: #fileID, function: #function, line: #line
        )
        let line = GatewayLogHandler.jsonLine(label: "pushgate", event: event, fields: GatewayLogHandler.fields([:], metadata))
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(line)) as? [String: String])
        let time = try #require(parsed["ts"])
        // The reference: the same members in a dictionary, written by JSONText (and JSONEncoder for keys
        // outside ASCII); the line's own members win over fields of their keys.
        var object: [String: JSONValue] = ["ts": .string(time), "level": "warning", "logger": "pushgate", "msg": "a \"message\""]
        for (key, value) in metadata where object[key] == nil { object[key] = .string(value.description) }
        #expect(String(decoding: line, as: UTF8.self) == String(decoding: try JSONText.encode(.object(object)), as: UTF8.self))
    }

    @Test func linesLeaveInOrderAndWriteNowWritesWhatWasBufferedFirst() throws {
        let pipe = try Pipe()
        let writer = LogLineWriter(descriptor: pipe.writeEnd, limit: 1 << 20) { count in Array("dropped \(count)\n".utf8) }
        let expected = (1...200).map { "buffered line \($0)\n" }.joined() + "at once\n"
        for number in 1...200 { writer.enqueue(Array("buffered line \(number)\n".utf8)) }
        writer.writeNow(Array("at once\n".utf8))
        // Everything reaches the pipe: the writer thread wrote some, writeNow the rest (or, when the
        // thread was writing, the thread).
        #expect(pipe.read(count: expected.utf8.count, until: .now + .seconds(10)) == expected)
        // Later lines reach the pipe from the writer thread alone, within its gathering time.
        writer.enqueue(Array("later\n".utf8))
        #expect(pipe.read(count: 6, until: .now + .seconds(30)) == "later\n")
    }

    /// A reader that stopped reading (a full pipe): a line written at once waits for room at most the
    /// stall timeout, the lines after it are buffered instead of waiting, and once the reader is back the
    /// buffered lines follow a count of what was lost.
    @Test func aStalledReaderHoldsUpTheWriterOnlyForTheStallTimeout() throws {
        let pipe = try Pipe()
        let filled = Self.fill(pipe)
        let writer = LogLineWriter(descriptor: pipe.writeEnd, limit: 1 << 20, startsThread: false) { count in
            Array("dropped \(count)\n".utf8)
        }
        let started = ContinuousClock.now
        writer.writeNow(Array("lost\n".utf8))
        #expect(ContinuousClock.now - started < .seconds(5), "waited for room at most the stall timeout")
        let second = ContinuousClock.now
        writer.writeNow(Array("kept\n".utf8))
        // Buffering takes microseconds; a write to the stalled reader waits at least the stall timeout
        // (1 s) before it gives up, so the bound stays below it. (Such a write would also have dropped the
        // line, which the check of what follows the reader's return sees.)
        #expect(ContinuousClock.now - second < .seconds(1), "buffered while the writer is stalled")
        // The reader comes back.
        #expect(pipe.read(count: filled, until: .now + .seconds(5)).utf8.count == filled)
        writer.flush()
        let expected = "dropped 1\nkept\n"
        #expect(pipe.read(count: expected.utf8.count, until: .now + .seconds(2)) == expected)
        writer.writeNow(Array("at once\n".utf8))
        #expect(pipe.read(count: 8, until: .now + .seconds(2)) == "at once\n")
    }

    /// A reader that stopped while the writer thread writes: the thread waits for it, over and over (each
    /// buffered line wakes it), but a warning written at once never waits for the thread's write: it is
    /// buffered behind it. (Before, each waited for the thread's stall timeout, a second a line.)
    @Test func aLineWrittenAtOnceNeverWaitsForTheWriterThreadsWrite() throws {
        let pipe = try Pipe()
        // The writer thread outlives the test: its descriptors stay open, so it never writes to a reused one.
        _ = Unmanaged.passRetained(pipe)
        let filled = Self.fill(pipe)
        let writer = LogLineWriter(descriptor: pipe.writeEnd, limit: 1 << 20) { count in Array("dropped \(count)\n".utf8) }
        writer.enqueue(Array("first\n".utf8))
        let started = ContinuousClock.now
        for number in 0..<20 {
            writer.enqueue(Array("buffered \(number)\n".utf8))
            usleep(20_000)  // the thread gathers for 10 ms, then writes (and waits for room)
            writer.writeNow(Array("warning \(number)\n".utf8))
        }
        let elapsed = ContinuousClock.now - started
        #expect(elapsed < .seconds(10), "20 warnings took \(elapsed)")
        // The reader comes back: lines flow again, after whatever the stalls dropped.
        #expect(pipe.read(count: filled, until: .now + .seconds(10)).utf8.count == filled)
        writer.writeNow(Array("after\n".utf8))
        writer.flush()
        var tail = ""
        let deadline = ContinuousClock.now + .seconds(10)
        while !tail.hasSuffix("after\n"), ContinuousClock.now < deadline { tail += pipe.read(count: 1, until: .now + .milliseconds(200)) }
        #expect(tail.hasSuffix("after\n"), "\(tail.suffix(200))")
    }

    /// Fills the pipe; returns how many bytes it took.
    static func fill(_ pipe: Pipe) -> Int {
        let filler = [UInt8](repeating: UInt8(ascii: "x"), count: 4096)
        var filled = 0
        let flags = fcntl(pipe.writeEnd, F_GETFL)
        _ = fcntl(pipe.writeEnd, F_SETFL, flags | O_NONBLOCK)
        while true {
            let written = filler.withUnsafeBytes { Glibc.write(pipe.writeEnd, $0.baseAddress, $0.count) }
            if written <= 0 { break }
            filled += written
        }
        _ = fcntl(pipe.writeEnd, F_SETFL, flags)
        return filled
    }

    @Test func linesOverTheLimitAreDroppedAndCounted() throws {
        let pipe = try Pipe()
        let writer = LogLineWriter(descriptor: pipe.writeEnd, limit: 20, startsThread: false) { count in
            Array("dropped \(count)\n".utf8)
        }
        writer.enqueue(Array("first line\n".utf8))  // 11 bytes: kept
        writer.enqueue(Array("second line\n".utf8))  // 23 in all: dropped
        writer.enqueue(Array("third\n".utf8))  // 17: kept
        writer.enqueue(Array("fourth line\n".utf8))  // 29: dropped
        #expect(pipe.read(count: 1, until: .now + .milliseconds(100)).isEmpty, "without the thread nothing is written yet")
        writer.flush()
        let expected = "dropped 2\nfirst line\nthird\n"
        #expect(pipe.read(count: expected.utf8.count, until: .now + .seconds(1)) == expected)
        // The count starts again.
        writer.enqueue(Array("fifth\n".utf8))
        writer.flush()
        #expect(pipe.read(count: 6, until: .now + .seconds(1)) == "fifth\n")
    }
}
