import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Finds a TCP port nobody uses, for an emulator whose port must be known before it starts (the demo
/// apps' configuration names it).
///
/// The port is drawn at random from below the system's ephemeral range, and checked by binding it for a
/// moment: a port the kernel hands out for port 0 or for an outgoing connection could be taken by another
/// socket between the check and the emulator's own bind, and the emulator would then fail to start.
public enum FreePort {
    /// A free port on `host`, not one of `taken`; nil when none could be bound at all.
    public static func pick(host: String = "127.0.0.1", avoiding taken: Set<Int> = []) -> Int? {
        let ephemeralStart = Self.ephemeralRangeStart()
        let candidates = max(1024, ephemeralStart - 12_000)..<ephemeralStart
        for _ in 0..<200 {
            let port = Int.random(in: candidates)
            if !taken.contains(port), Self.tryBind(host: host, port: port) == port { return port }
        }
        // Every draw was taken: fall back to a port the kernel chooses.
        return Self.tryBind(host: host, port: 0)
    }

    /// The first port of the kernel's ephemeral range (32768 when it cannot be read).
    /// `count` free consecutive ports in a slot of their own: the slot follows from the process id and
    /// how many blocks the process took before, so gateways started side by side (a test suite's) take
    /// different slots instead of drawing at random and sometimes the same port between the check and
    /// the bind. Falls back to ``pick(host:avoiding:)`` for each port when the slot is taken.
    public static func pickBlock(count: Int, host: String = "127.0.0.1") -> [Int]? {
        let ephemeralStart = Self.ephemeralRangeStart()
        let low = max(1024, ephemeralStart - 12_000)
        let slots = (ephemeralStart - low) / count
        if slots > 0 {
            // Processes 64 slots apart, and each call in one process (in-process tests) a slot further.
            let call = Self.blockCalls.add(1, ordering: .relaxed).oldValue
            let slot = (Int(getpid()) * 64 + call) % slots
            let first = low + slot * count
            let block = Array(first..<(first + count))
            if block.allSatisfy({ Self.tryBind(host: host, port: $0) == $0 }) { return block }
        }
        var ports: [Int] = []
        for _ in 0..<count {
            guard let port = Self.pick(host: host, avoiding: Set(ports)) else { return nil }
            ports.append(port)
        }
        return ports
    }

    private static let blockCalls = Atomic<Int>(0)

    private static func ephemeralRangeStart() -> Int {
        let text = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)) ?? ""
        guard let first = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).first, let low = Int(first), low > 2048 else {
            return 32768
        }
        return low
    }

    /// Binds `port` (0: any) on `host` for a moment.
    /// - Returns: the port bound, or nil when it is taken.
    private static func tryBind(host: String, port: Int) -> Int? {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, host, &address.sin_addr)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { return nil }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard named == 0 else { return nil }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
