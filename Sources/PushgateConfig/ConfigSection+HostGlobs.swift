extension ConfigSection {
    /// A list of `host[:port]` globs (`allowed_endpoints`), each checked to be one: a URL (`https://…`) or
    /// a path in it would match no endpoint, and every pushkey would be rejected (and its pusher deleted by
    /// its homeserver), so it is refused here, naming the entry; so is an empty list.
    /// - Throws: ``ConfigurationError`` naming the entry at fault.
    public func hostGlobs(_ key: String) throws -> [String]? {
        guard let globs = try self.stringList(key) else { return nil }
        // An empty list would allow no endpoint at all: every pushkey refused, every pusher deleted.
        if globs.isEmpty {
            throw ConfigurationError(key: self.keyPath(key), "is empty, which would allow no endpoint: list the hosts allowed, or leave the key out to allow any")
        }
        for (index, glob) in globs.enumerated() {
            let entry = "\(self.keyPath(key))[\(index)]"
            if glob.isEmpty { throw ConfigurationError(key: entry, "is empty; expected host[:port], such as push.example.com or *.example.com:8443") }
            if glob.contains("://") || glob.contains("/") || glob.contains("@") || glob.contains(where: \.isWhitespace) {
                throw ConfigurationError(key: entry, "is not host[:port]: write the endpoints' host (and port), such as push.example.com, without scheme or path")
            }
        }
        return globs
    }
}
