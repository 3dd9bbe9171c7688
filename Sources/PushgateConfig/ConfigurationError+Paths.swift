import Foundation

extension ConfigurationError {
    /// What an error shows in place of a value that does not look like a file path.
    static let pathNotShown = "(the value is not shown: it does not look like a file path, and a secret pasted where the path of its file belongs must not be printed; give the path of a file)"

    /// How a file-path setting is shown in an error: the path itself when it looks like one, otherwise a
    /// placeholder, so that a secret pasted where a path belongs (a PEM block, a JSON service account, a
    /// bare key or app secret) is never printed.
    ///
    /// A value looks like a path when it names something that exists, begins as relative paths do (`./`,
    /// `../`, `~/`), has a parent directory that exists, is absolute and ends in a plain file name with an
    /// extension, or is such a file name (`apns.p8`). A bare secret (hex, base64 even when it begins with
    /// `/`, a JWT) is none of these.
    /// - Parameter value: the setting's value.
    /// - Returns: text safe to print.
    public static func shownPath(_ value: String) -> String {
        Self.looksLikePath(value) ? value : Self.pathNotShown
    }

    /// Whether `value` may be printed as a path (see ``shownPath(_:)``).
    /// - Parameter exists: whether a file or directory exists at a path (tests pass their own).
    static func looksLikePath(_ value: String, exists: (String) -> Bool = { FileManager.default.fileExists(atPath: $0) }) -> Bool {
        guard !value.isEmpty, value.utf8.count <= 1024 else { return false }
        let keyMaterial = value.contains("\n") || value.contains("\r") || value.contains("-----") || value.contains("PRIVATE KEY")
            || value.contains("{")
        guard !keyMaterial else { return false }
        if exists(value) { return true }
        // Base64 can begin with `/` (a key one time in 64), never with `.` or `~`.
        if ["./", "../", "~/"].contains(where: { value.hasPrefix($0) }) { return true }
        if let slash = value.lastIndex(of: "/") {
            let parent = String(value[..<slash])
            if !parent.isEmpty && exists(parent) { return true }
            // An absolute path to a missing directory (a typo) still names a file: `/etc/pushgte/apns.p8`.
            return value.hasPrefix("/") && Self.isPlainFileName(String(value[value.index(after: slash)...]))
        }
        return Self.isPlainFileName(value)
    }

    /// A file name of letters, digits, `.`, `_` and `-` whose last `.` starts a short extension of
    /// letters and digits (`key.p8`, `vapid.pem`, `service-account.json`).
    private static func isPlainFileName(_ value: String) -> Bool {
        guard value.utf8.count <= 255, let dot = value.lastIndex(of: "."), dot != value.startIndex else { return false }
        let isNameByte = { (byte: UInt8) -> Bool in
            (0x30...0x39).contains(byte) || (0x41...0x5a).contains(byte) || (0x61...0x7a).contains(byte) || byte == 0x2e || byte == 0x5f || byte == 0x2d
        }
        guard value.utf8.allSatisfy(isNameByte) else { return false }
        let suffix = value[value.index(after: dot)...]
        return (1...8).contains(suffix.utf8.count) && suffix.utf8.allSatisfy { isNameByte($0) && $0 != 0x2e && $0 != 0x5f && $0 != 0x2d }
    }
}
