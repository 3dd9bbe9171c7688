import Foundation

extension Array where Element == UInt8 {
    /// Lowercase hex.
    var hex: String { self.map { String(format: "%02x", $0) }.joined() }

    /// Bytes from hex text; nil when it is not hex.
    init?(hex: String) {
        let characters = Array(hex.utf8)
        guard characters.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(characters.count / 2)
        for index in stride(from: 0, to: characters.count, by: 2) {
            guard let byte = UInt8(String(decoding: characters[index..<index + 2], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(byte)
        }
        self = bytes
    }
}
