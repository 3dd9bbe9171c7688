/// The Web Push `Topic` of an `only_last_per_room` pusher: padded base64url of the 22-byte BLAKE2s digest
/// of the room id (32 characters ending `==`), exactly as Sygnal sends it, so a newer notification for a
/// room replaces the older one. Push services accept the padding; the back end sends it unchanged.
enum WebPushRoomTopic {
    static func topic(forRoom roomID: String) -> String {
        let digest = BLAKE2s.hash(Array(roomID.utf8), digestSize: 22)
        return Base64URLPadded.encode(digest)
    }
}

/// URL-safe base64 with padding, as Python's `urlsafe_b64encode` writes it.
enum Base64URLPadded {
    static func encode(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        var output = ""
        var index = 0
        while index < bytes.count {
            let chunk = Array(bytes[index..<min(index + 3, bytes.count)])
            let value = chunk.enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << (16 - 8 * UInt32($1.offset)) }
            for position in 0..<4 {
                if position <= chunk.count {
                    output.append(alphabet[Int((value >> (18 - 6 * UInt32(position))) & 0x3f)])
                } else {
                    output.append("=")
                }
            }
            index += 3
        }
        return output
    }
}
