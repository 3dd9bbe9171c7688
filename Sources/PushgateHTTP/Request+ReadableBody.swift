public import Hummingbird
public import NIOCore

extension Request {
    /// The body, up to `limit` bytes; nil when the client sent one that cannot be read (a malformed chunk),
    /// for the route to answer in its own protocol's shape.
    ///
    /// A body over the limit (`NIOTooManyBytesError`, answered 413 by the gateway), a connection that
    /// closed (`ChannelError`) and a cancellation are thrown as they are.
    public func readableBody(upTo limit: Int) async throws -> ByteBuffer? {
        do {
            return try await self.body.collect(upTo: limit)
        } catch let error where error is NIOTooManyBytesError || error is ChannelError || error is CancellationError {
            throw error
        } catch {
            return nil
        }
    }
}
