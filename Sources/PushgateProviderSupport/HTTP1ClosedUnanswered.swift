/// A connection that ended before a single byte of the answer to the request on it had come (a server
/// closing a kept-alive connection as the request went out, most often). Never leaves the
/// ``HTTP1ConnectionPool``: on a connection it had kept, the request goes once more on a new one; otherwise
/// this becomes ``HTTP1ExchangeError/connectionLost(_:)``.
struct HTTP1ClosedUnanswered: Error {
    /// Why the connection ended.
    let why: String
}
