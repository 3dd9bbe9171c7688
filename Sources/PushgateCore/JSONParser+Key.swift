extension JSONParser {
    /// An object member's key as ``JSONParser/readMembers(_:)`` hands it over: compared with literals
    /// (`switch key { case "devices": … }`, `key == "notification"`) byte for byte, without making a
    /// `String` for every key of every object read; ``string`` makes one when the key itself is needed.
    ///
    /// A key without escapes refers to the text being read, so it is valid only inside the closure it is
    /// handed to; do not keep it.
    public struct Key {
        /// The key's UTF-8 bytes in the text (a key without escapes, ASCII or validated).
        @usableFromInline let raw: UnsafeBufferPointer<UInt8>
        /// The key as decoded, for a key with escapes or bytes outside ASCII.
        @usableFromInline let decoded: String?

        init(raw: UnsafeBufferPointer<UInt8>) {
            self.raw = raw
            self.decoded = nil
        }

        init(decoded: String) {
            self.raw = UnsafeBufferPointer(start: nil, count: 0)
            self.decoded = decoded
        }

        /// The key as a string.
        public var string: String {
            self.decoded ?? String(decoding: self.raw, as: UTF8.self)
        }

        /// Whether the key is exactly `literal`, compared as UTF-8 bytes (code point for code point, as
        /// Python's `json` compares keys; `String`'s `==` would also match canonically equivalent text).
        ///
        /// Inlinable, so that a `switch` over many literals compiles to a length test per case (the
        /// literal's length is a constant) and a byte comparison only where the lengths agree.
        @inlinable @inline(__always)
        public static func == (key: Key, literal: StaticString) -> Bool {
            if key.decoded != nil { return key.decodedEquals(literal) }
            return literal.withUTF8Buffer { expected in
                guard expected.count == key.raw.count else { return false }
                for index in 0..<expected.count where expected[index] != key.raw[index] { return false }
                return true
            }
        }

        /// Whether the key is exactly `literal`: what lets `switch` match keys against string literals.
        @inlinable @inline(__always)
        public static func ~= (literal: StaticString, key: Key) -> Bool {
            key == literal
        }

        @usableFromInline
        func decodedEquals(_ literal: StaticString) -> Bool {
            guard var decoded = self.decoded else { return false }
            return literal.withUTF8Buffer { expected in decoded.withUTF8 { $0.elementsEqual(expected) } }
        }
    }
}
