#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Random bytes from the kernel in one read (the standard library's generator makes a system call per
/// 8 bytes, which showed in profiles of frame padding, IVs and ephemeral keys).
public enum SecureRandom {
    /// `/dev/urandom`, opened once; -1 when it cannot be opened.
    private static let device: Int32 = open("/dev/urandom", O_RDONLY | O_CLOEXEC)

    /// `count` random bytes.
    public static func bytes(_ count: Int) -> [UInt8] {
        guard count > 0 else { return [] }
        var result = [UInt8](repeating: 0, count: count)
        var filled = 0
        if Self.device >= 0 {
            while filled < count {
                let got = result.withUnsafeMutableBytes { buffer in read(Self.device, buffer.baseAddress! + filled, count - filled) }
                if got > 0 {
                    filled += got
                } else if got < 0 && errno == EINTR {
                    continue
                } else {
                    break
                }
            }
        }
        if filled == count { return result }
        var generator = SystemRandomNumberGenerator()
        for index in result.indices { result[index] = generator.next() }
        return result
    }
}
