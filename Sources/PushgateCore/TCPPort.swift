/// The port numbers a connection can be made to.
///
/// Foundation's `URL` and `URLComponents` read any run of digits as a port, and NIO traps on a socket
/// address made from a number past 65535; port 0 is a listener's "any port", never a destination. Every
/// URL the gateway will connect to (an endpoint, a proxy, a database, a provider's base URL) is checked
/// against this range first.
public enum TCPPort {
    /// 1…65535.
    public static let connectable: ClosedRange<Int> = 1...65_535
}
