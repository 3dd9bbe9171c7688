#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
public import Foundation
import Synchronization

/// Random bytes from the kernel, read 4 KiB at a time and handed out once each: the gateway's one source
/// of secure random bytes (keys, nonces, salts, padding, request ids).
///
/// Foundation's `UUID()` on Linux opens, reads and closes `/dev/urandom` for every identifier (three system
/// calls, about 4.5 µs), and the standard library's generator makes one system call per 8 bytes. The
/// delivery path draws a request id per APNs request and a salt and a key per Web Push message; here that
/// is one read per 4 KiB. Bytes handed out are wiped from the pool.
public final class SecureRandomPool: Sendable {
    /// The pool the back ends share.
    public static let shared = SecureRandomPool()

    /// How many bytes one read from the kernel draws.
    static let capacity = 4096

    private struct State {
        var bytes: [UInt8]
        /// Where the unused bytes start; `bytes.count` when none are left.
        var offset: Int
    }

    private let state = Mutex(State(bytes: [UInt8](repeating: 0, count: SecureRandomPool.capacity), offset: SecureRandomPool.capacity))
    /// `/dev/urandom`, opened once; -1 when it cannot be opened (the standard library's generator then
    /// fills the pool).
    private let device: Int32

    /// Creates a pool with nothing drawn yet.
    public init() {
        self.device = open("/dev/urandom", O_RDONLY | O_CLOEXEC)
    }

    deinit {
        if self.device >= 0 { close(self.device) }
    }

    /// Fills `buffer` with random bytes.
    public func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        var written = 0
        while written < buffer.count {
            self.state.withLock { state in
                if state.offset == state.bytes.count { self.refill(&state.bytes); state.offset = 0 }
                let count = min(buffer.count - written, state.bytes.count - state.offset)
                state.bytes.withUnsafeMutableBytes { pool in
                    let source = UnsafeMutableRawBufferPointer(rebasing: pool[state.offset..<state.offset + count])
                    UnsafeMutableRawBufferPointer(rebasing: buffer[written..<written + count]).copyMemory(from: UnsafeRawBufferPointer(source))
                    source.initializeMemory(as: UInt8.self, repeating: 0)
                }
                state.offset += count
                written += count
            }
        }
    }

    /// `count` random bytes.
    public func bytes(_ count: Int) -> [UInt8] {
        guard count > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: count)
        bytes.withUnsafeMutableBytes { self.fill($0) }
        return bytes
    }

    /// A random version 4 UUID (RFC 9562: 122 random bits, the version and variant bits set).
    public func uuid() -> UUID {
        var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &bytes) { self.fill($0) }
        bytes.6 = (bytes.6 & 0x0F) | 0x40
        bytes.8 = (bytes.8 & 0x3F) | 0x80
        return UUID(uuid: bytes)
    }

    /// A generator drawing from this pool.
    public var generator: Generator { Generator(pool: self) }

    /// A `RandomNumberGenerator` drawing from a pool.
    public struct Generator: RandomNumberGenerator {
        let pool: SecureRandomPool

        public mutating func next() -> UInt64 {
            var word: UInt64 = 0
            withUnsafeMutableBytes(of: &word) { self.pool.fill($0) }
            return word
        }
    }

    private func refill(_ bytes: inout [UInt8]) {
        var filled = 0
        if self.device >= 0 {
            while filled < bytes.count {
                let got = bytes.withUnsafeMutableBytes { buffer in read(self.device, buffer.baseAddress! + filled, buffer.count - filled) }
                if got > 0 {
                    filled += got
                } else if got < 0 && errno == EINTR {
                    continue
                } else {
                    break
                }
            }
        }
        guard filled < bytes.count else { return }
        var generator = SystemRandomNumberGenerator()
        for index in filled..<bytes.count { bytes[index] = generator.next() }
    }
}
