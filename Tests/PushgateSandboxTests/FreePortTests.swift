import Foundation
import PushgateSandbox
import PushgateTestSupport
import Testing

/// Ports handed out for emulators stay this process's until it ends: another process picking at the same
/// moment (another gateway's built-in sandbox, or a test) cannot be handed them too.
@Suite("Free ports")
struct FreePortTests {
    /// Tries, in another process, to claim each port as a Pushgate process would; prints the ports it got.
    static let claimScript = """
        import socket, sys
        got = []
        for port in sys.argv[1:]:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                s.bind("\\0pushgate-port-" + port)
                got.append(port)
            except OSError:
                pass
        print(",".join(got))
        """

    @Test func blocksAndSinglePortsAreDistinctAndClaimedAgainstOtherProcesses() async throws {
        var ports: [Int] = []
        for _ in 0..<4 { ports += try #require(FreePort.pickBlock(count: 6)) }
        for _ in 0..<6 { ports.append(try #require(FreePort.pick())) }
        #expect(Set(ports).count == ports.count, "a port was handed out twice: \(ports)")
        // Another process can claim none of them, but can claim a port this one did not hand out.
        let unclaimed = 1994  // below the range ports are picked from, so nobody claims it
        let claimedElsewhere = try await PythonReference.run(Self.claimScript, arguments: (ports + [unclaimed]).map(String.init))
        #expect(claimedElsewhere == String(unclaimed))
        // Each is free to bind until an emulator takes it.
        for port in ports {
            let socket = try #require(ServerSocketProbe.listen(port: port), "port \(port) could not be bound")
            close(socket)
        }
    }
}

/// Binds and listens on a loopback port, as an emulator does.
enum ServerSocketProbe {
    static func listen(port: Int) -> Int32? {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, Glibc.listen(descriptor, 1) == 0 else {
            close(descriptor)
            return nil
        }
        return descriptor
    }
}
