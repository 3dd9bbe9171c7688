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
/// socket between the check and the emulator's own bind, and the emulator would then fail to start. For
/// the same reason every port handed out is claimed for the life of the process (see ``claim(_:)``), so
/// another Pushgate process (or test) picking at the same moment never gets it too.
public enum FreePort {
    /// A free port on `host`, not one of `taken`; nil when none could be bound at all.
    public static func pick(host: String = "127.0.0.1", avoiding taken: Set<Int> = []) -> Int? {
        let ephemeralStart = Self.ephemeralRangeStart()
        let candidates = max(1024, ephemeralStart - 12_000)..<ephemeralStart
        for _ in 0..<200 {
            let port = Int.random(in: candidates)
            guard !taken.contains(port), let claims = Self.claim([port]) else { continue }
            if Self.tryBind(host: host, port: port) == port { return port }
            Self.release(claims)
        }
        // Every draw was taken: fall back to a port the kernel chooses.
        return Self.tryBind(host: host, port: 0)
    }

    /// `count` free consecutive ports in a slot of their own. The search starts at a slot that follows
    /// from the process id and how many blocks the process took before, and takes the first slot whose
    /// ports this process can claim and bind: gateways started side by side (a test suite's) never take
    /// the same block between the check and the emulators' bind, as they sometimes did when two process
    /// ids led to one slot. Falls back to ``pick(host:avoiding:)`` for each port when no slot is free.
    public static func pickBlock(count: Int, host: String = "127.0.0.1") -> [Int]? {
        let ephemeralStart = Self.ephemeralRangeStart()
        let low = max(1024, ephemeralStart - 12_000)
        let slots = (ephemeralStart - low) / count
        if slots > 0 {
            // Processes 64 slots apart, and each call in one process (in-process tests) a slot further.
            let call = Self.blockCalls.add(1, ordering: .relaxed).oldValue
            let start = (Int(getpid()) * 64 + call) % slots
            for step in 0..<min(slots, 256) {
                let first = low + (start + step) % slots * count
                let block = Array(first..<(first + count))
                guard let claims = Self.claim(block) else { continue }
                if block.allSatisfy({ Self.tryBind(host: host, port: $0) == $0 }) { return block }
                Self.release(claims)
            }
        }
        var ports: [Int] = []
        for _ in 0..<count {
            guard let port = Self.pick(host: host, avoiding: Set(ports)) else { return nil }
            ports.append(port)
        }
        return ports
    }

    private static let blockCalls = Atomic<Int>(0)

    /// Claims `ports` for the rest of this process's life, all or none: for each, an abstract Unix socket
    /// named after the port, which no other process can bind until this one ends or releases it (the
    /// descriptors are kept open on purpose; the kernel releases them when the process exits, however it
    /// exits). Every pick in every Pushgate process claims its ports, so two never hand out the same one.
    /// Elsewhere than Linux there is no such namespace and every claim succeeds.
    /// - Returns: the claims' descriptors, or nil when another process holds one of the ports.
    private static func claim(_ ports: [Int]) -> [Int32]? {
        var claims: [Int32] = []
        for port in ports {
            guard let descriptor = Self.bindAbstractName("pushgate-port-\(port)") else {
                Self.release(claims)
                return nil
            }
            claims.append(descriptor)
        }
        return claims
    }

    private static func release(_ claims: [Int32]) {
        for descriptor in claims where descriptor >= 0 { close(descriptor) }
    }

    /// Binds an abstract Unix socket named `name`; nil when another socket has that name. -1 where
    /// there is nothing to claim with (not Linux, or no socket could be made).
    private static func bindAbstractName(_ name: String) -> Int32? {
        #if os(Linux)
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return -1 }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        // The abstract namespace: the path starts with a zero byte and the name's bytes follow it.
        let bytes = Array(name.utf8.prefix(MemoryLayout.size(ofValue: address.sun_path) - 1))
        withUnsafeMutableBytes(of: &address.sun_path) { path in
            path[0] = 0
            for (index, byte) in bytes.enumerated() { path[index + 1] = byte }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + 1 + bytes.count)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        guard bound == 0 else {
            close(descriptor)
            return nil
        }
        return descriptor
        #else
        return -1
        #endif
    }

    /// The first port of the kernel's ephemeral range (32768 when it cannot be read).
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
