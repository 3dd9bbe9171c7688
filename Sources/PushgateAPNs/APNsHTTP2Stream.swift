import NIOCore

/// One request's stream on an ``APNsHTTP2Handler``'s connection. (A class: the handler's lists share
/// it, and each frame changes it in place.)
final class APNsHTTP2Stream {
    let id: UInt32
    let promise: EventLoopPromise<APNsAnswer>
    var timeout: Scheduled<Void>?
    /// The request until its stream is opened.
    var request: APNsRequest?
    var status: Int?
    var retryAfter: String?
    var body: ByteBuffer?
    /// Body bytes not yet sent (flow control).
    var unsent: ByteBuffer?
    var sendWindow = 0
    /// The connection's frame count when the stream opened.
    var framesReadWhenOpened: UInt64 = 0
    var receiveWindow = HTTP2Wire.defaultWindowSize
    /// Set once the stream is answered, failed or reset.
    var isClosed = false

    init(id: UInt32, promise: EventLoopPromise<APNsAnswer>, request: APNsRequest) {
        self.id = id
        self.promise = promise
        self.request = request
    }

    /// Whether the stream was opened (its HEADERS sent).
    var isOpen: Bool { self.request == nil }
}
