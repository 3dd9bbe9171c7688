/// The path and query of an absolute-form request target (`scheme://authority/path?query#fragment`).
struct AbsoluteFormTarget {
    let pathAndQuery: String

    init?(_ target: String) {
        let bytes = Array(target.utf8)
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")), bytes.count >= colon + 3,
            bytes[colon + 1] == UInt8(ascii: "/"), bytes[colon + 2] == UInt8(ascii: "/")
        else { return nil }
        let afterAuthority = bytes[(colon + 3)...].firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }
        guard let start = afterAuthority, bytes[start] != UInt8(ascii: "#") else {
            self.pathAndQuery = "/"
            return
        }
        let end = bytes[start...].firstIndex(of: UInt8(ascii: "#")) ?? bytes.endIndex
        let tail = String(decoding: bytes[start..<end], as: UTF8.self)
        self.pathAndQuery = bytes[start] == UInt8(ascii: "?") ? "/" + tail : tail
    }
}
