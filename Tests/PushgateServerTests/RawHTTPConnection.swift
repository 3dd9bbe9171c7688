import Foundation
import PushgateTestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One connection to a local listener over a plain socket, so nothing between the test and the server
/// tidies the bytes up: it writes each step's bytes (pausing after it, so the server reads it on its own;
/// once the server closed the connection, it writes no more), then reads until the server closes the
/// connection or the wait ends.
struct RawHTTPConnection {
    /// What came back.
    struct Outcome: Sendable {
        /// Every byte the server wrote, as Latin-1.
        let received: String
        /// How long after the last write the server closed the connection; nil if it did not within the wait.
        let closedAfter: Duration?

        /// The status code of each answer, in order.
        var statuses: [Int] {
            self.received.components(separatedBy: "HTTP/1.1 ").dropFirst().compactMap { Int($0.prefix(3)) }
        }

        /// The body of the last answer.
        var lastBody: String {
            self.received.components(separatedBy: "\r\n\r\n").last ?? ""
        }
    }

    /// A write and the pause after it.
    struct Step: Sendable {
        let bytes: [UInt8]
        let pause: Duration

        init(_ bytes: [UInt8], pause: Duration = .zero) {
            self.bytes = bytes
            self.pause = pause
        }

        init(_ text: String, pause: Duration = .zero) {
            self.init(Array(text.utf8), pause: pause)
        }
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Connects to `127.0.0.1:port`, writes `steps`, and reads for up to `wait` after the last.
    static func exchange(port: Int, _ steps: [Step], wait: Duration = .seconds(20)) async throws -> Outcome {
        try await OffPool.run { try Self.blockingExchange(port: port, steps, wait: wait) }
    }

    private static func blockingExchange(port: Int, _ steps: [Step], wait: Duration) throws -> Outcome {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw Failure(description: "socket: \(errno)") }
        defer { close(fd) }
        var noDelay: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw Failure(description: "connect: \(errno)") }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        writing: for (index, step) in steps.enumerated() {
            // Reads what came back so far; once the server closed, writing on would reset the connection
            // and lose its answer.
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            while index > 0, poll(&poller, 1, 0) > 0 {
                let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                guard count > 0 else { break writing }
                received += buffer[..<count]
            }
            var sent = 0
            while sent < step.bytes.count {
                let written = step.bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if written < 0 { break }  // the server closed the connection: read what it wrote
                sent += written
            }
            if step.pause > .zero {
                Thread.sleep(forTimeInterval: Double(step.pause.components.seconds) + Double(step.pause.components.attoseconds) / 1e18)
            }
        }
        let clock = ContinuousClock()
        let started = clock.now
        while true {
            let left = wait - (clock.now - started)
            guard left > .zero else { return Outcome(received: Self.latin1(received), closedAfter: nil) }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000)
            guard poll(&poller, 1, max(1, milliseconds)) > 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                received += buffer[..<count]
            } else if count < 0, errno == EINTR || errno == EAGAIN {
                continue
            } else {
                // 0: the server closed the connection; below 0: it reset it.
                return Outcome(received: Self.latin1(received), closedAfter: clock.now - started)
            }
        }
    }

    private static func latin1(_ bytes: [UInt8]) -> String {
        String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
    }
}
