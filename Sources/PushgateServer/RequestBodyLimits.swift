/// The largest request body accepted: `http.max_request_body_size`, or a larger limit a route declares
/// for its path.
struct RequestBodyLimits: Sendable {
    /// The limit of every path without one of its own.
    let standard: Int
    /// Larger limits of single paths.
    let byPath: [String: Int]

    init(standard: Int, byPath: [String: Int] = [:]) {
        self.standard = standard
        self.byPath = byPath
    }

    /// The limit for a request path (without its query); a trailing `/` names the same route, as the
    /// router takes it.
    func limit(forPath path: String) -> Int {
        guard !self.byPath.isEmpty else { return self.standard }
        guard let own = self.byPath[path] ?? (path.utf8.count > 1 && path.utf8.last == UInt8(ascii: "/") ? self.byPath[String(path.dropLast())] : nil)
        else { return self.standard }
        return max(own, self.standard)
    }

    /// The limit for a request target: origin form (`/path?query`) or absolute form
    /// (`http://host/path?query`), the limit of the path the route is found by either way.
    func limit(forTarget target: String) -> Int {
        guard !self.byPath.isEmpty else { return self.standard }
        if target.utf8.first != UInt8(ascii: "/"), let absolute = AbsoluteFormTarget(target) {
            return self.limit(forTarget: absolute.pathAndQuery)
        }
        // By byte, over the contiguous bytes: a `Character` search runs grapheme breaking over the whole
        // path, and the generic search of `String.UTF8View` checks each index it steps over.
        var target = target
        let path = target.withUTF8 { bytes in
            bytes.firstIndex(of: UInt8(ascii: "?")).map { String(decoding: UnsafeBufferPointer(rebasing: bytes[..<$0]), as: UTF8.self) }
        }
        return self.limit(forPath: path ?? target)
    }
}
