#if canImport(Glibc)
import Glibc
private let systemWrite = Glibc.write
#elseif canImport(Musl)
import Musl
private let systemWrite = Musl.write
#elseif canImport(Darwin)
import Darwin
private let systemWrite = Darwin.write
#endif
import NIOConcurrencyHelpers
import PushgateCore
import Synchronization

/// Writes log lines to a file descriptor (standard error), either from a thread of its own or at once.
///
/// The access log writes a line per request at the default level, from the event loop that answers the
/// request. Written there, each line cost a `write` system call on the loop, and a reader of standard
/// error that stops reading (a full pipe) would stop the loop. ``enqueue(_:)`` only appends the line to a
/// buffer; the writer thread, woken by the first line, lets lines gather for ``gathering`` and writes
/// them in one call. When more than `limit`
/// bytes wait, lines are dropped and counted, and a line saying how many were dropped is written once
/// the writer catches up: the gateway never waits for its log.
///
/// ``writeNow(_:)`` writes a line before it returns, after whatever was buffered before it, for the rare
/// lines an operator must not lose (warnings and worse, a start and a stop) even when the process ends
/// right after them; when another write is under way it buffers the line instead, for the writer thread
/// (``flush()`` at the stop writes what is left), and never waits for that write.
///
/// No write waits for the reader without bound: each piece (at most `PIPE_BUF` bytes, which a pipe takes
/// whole once it has room) waits at most ``stallTimeout`` for room. When that passes the rest is dropped
/// and counted, and until a write goes through again ``writeNow(_:)`` buffers its line as ``enqueue(_:)``
/// does, so a reader that stopped or drains slowly (a stuck journal, a full pipe) holds up no thread that
/// logs: only the writer thread waits for it.
final class LogLineWriter: @unchecked Sendable {
    private let descriptor: Int32
    private let limit: Int
    private let droppedNotice: @Sendable (Int) -> [UInt8]
    /// Whether ``enqueue(_:)`` starts the writer thread (tests leave it off and call ``flush()``).
    private let startsThread: Bool

    /// Guards `pending`, `dropped` and `started`; its value is whether the writer thread has work.
    private let work = ConditionLock<Bool>(value: false)
    private var pending: [UInt8] = []
    private var dropped = 0
    private var started = false
    /// Held while bytes go to the descriptor (taken before `work`), so lines leave in the order they came;
    /// its value is whether the last write found no room in time (the reader stopped).
    private let output = Mutex(false)

    /// How long one piece of a write waits for the descriptor to take it.
    static let stallTimeout: Int32 = 1_000  // milliseconds
    /// The largest piece written at once: a pipe takes a write of at most this much whole, or not at all.
    static let piece = 4_096

    /// - Parameters:
    ///   - descriptor: where the lines go.
    ///   - limit: the most bytes buffered; lines beyond it are dropped.
    ///   - droppedNotice: the line that says how many lines were dropped.
    ///   - startsThread: whether the first buffered line starts the writer thread; without it, buffered
    ///     lines are written only by ``flush()`` and ``writeNow(_:)``.
    init(descriptor: Int32, limit: Int, startsThread: Bool = true, droppedNotice: @escaping @Sendable (Int) -> [UInt8]) {
        self.descriptor = descriptor
        self.limit = limit
        self.startsThread = startsThread
        self.droppedNotice = droppedNotice
    }

    /// Buffers `line` (with its newline) for the writer thread, or drops it when the buffer is full.
    func enqueue(_ line: [UInt8]) {
        self.work.lock()
        let mustStart = self.startsThread && !self.started
        self.started = true
        if self.pending.count + line.count > self.limit {
            self.dropped += 1
        } else {
            self.pending.append(contentsOf: line)
        }
        self.work.unlock(withValue: true)
        if mustStart {
            NamedThread.start(name: "pushgate-log") { [self] in self.run() }
        }
    }

    /// Writes what is buffered and then `line` (with its newline), before it returns.
    func writeNow(_ line: [UInt8]) {
        let written = self.output.withLockIfAvailable { stalled -> Bool in
            guard !stalled else { return false }
            var bytes = self.takePending()
            bytes.append(contentsOf: line)
            self.write(bytes, stalled: &stalled)
            return true
        }
        // Another write is under way (the writer thread's, which may wait for a slow reader), or the
        // reader stopped: the line follows what is buffered.
        if written != true { self.enqueue(line) }
    }

    /// Writes what is buffered, before it returns.
    func flush() {
        self.output.withLock { stalled in self.write(self.takePending(), stalled: &stalled) }
    }

    /// How long the writer thread lets lines gather after the first: under load a write then carries
    /// hundreds of lines, and it is woken once a gathering instead of once a line.
    static let gathering: UInt32 = 10_000  // microseconds

    /// The writer thread: waits for lines, lets more gather, and writes them in one call.
    private func run() {
        while true {
            self.work.lock(whenValue: true)
            self.work.unlock()
            usleep(Self.gathering)
            self.output.withLock { stalled in self.write(self.takePending(), stalled: &stalled) }
        }
    }

    /// The buffered bytes, preceded by the dropped-lines notice when lines were dropped (called holding
    /// `output`).
    private func takePending() -> [UInt8] {
        self.work.lock()
        var bytes: [UInt8] = []
        swap(&bytes, &self.pending)
        let dropped = self.dropped
        self.dropped = 0
        self.work.unlock(withValue: false)
        return dropped > 0 ? self.droppedNotice(dropped) + bytes : bytes
    }

    /// Writes all of `bytes` in pieces, each once the descriptor has room for it, retrying after a signal
    /// or a partial write; gives up on an error, and when no room came within ``stallTimeout`` (then the
    /// writer is stalled, and the rest counts as one dropped line). Called holding `output`.
    /// Sets `stalled` (the value of `output`) to whether the reader took the bytes in time.
    private func write(_ bytes: [UInt8], stalled: inout Bool) {
        guard !bytes.isEmpty else { return }
        let complete = bytes.withUnsafeBytes { buffer -> Bool in
            var offset = 0
            while offset < buffer.count {
                var poller = pollfd(fd: self.descriptor, events: Int16(POLLOUT), revents: 0)
                let ready = poll(&poller, 1, Self.stallTimeout)
                if ready < 0, errno == EINTR { continue }
                guard ready > 0 else { return false }
                let written = systemWrite(self.descriptor, buffer.baseAddress! + offset, min(Self.piece, buffer.count - offset))
                if written > 0 {
                    offset += written
                } else if written < 0, errno == EINTR {
                    continue
                } else {
                    return true  // an error: nothing to wait for
                }
            }
            return true
        }
        if !complete {
            self.work.lock()
            self.dropped += 1
            self.work.unlock()
        }
        stalled = !complete
    }
}
