/// Entries of an `X-Forwarded-For` header (`client, proxy1, proxy2`; repeated headers joined by `, `).
public enum ForwardedFor {
    /// The last entry, the one the proxy in front of the gateway added: the only one a client cannot
    /// choose, so the one to count or limit by. Nil when the header is absent or its last entry empty.
    public static func lastEntry(_ header: String?) -> String? {
        Self.trimmed(header?.split(separator: ",").last)
    }

    private static func trimmed(_ entry: Substring?) -> String? {
        guard let entry else { return nil }
        let text = entry.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed()
        return text.isEmpty ? nil : String(text)
    }
}
