import NIOCore

/// A request body whose reading failed: the bytes received, then the error.
struct FailingRequestBody: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let received: ByteBuffer
    let error: any Error

    struct AsyncIterator: AsyncIteratorProtocol {
        var received: ByteBuffer?
        let error: any Error

        mutating func next() async throws -> ByteBuffer? {
            if let received = self.received.take(), received.readableBytes > 0 { return received }
            throw self.error
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(received: self.received, error: self.error)
    }
}
