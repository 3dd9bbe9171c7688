import PushgateCore

/// How an outbox entry's tokens are stored in its row, the same in every store: the first in
/// `push_token`, the others (if any) in `more_tokens` as a JSON array of strings, and their number in
/// `token_count` (what claims and the pending count add up).
package struct OutboxTokenColumns: Sendable, Equatable {
    /// The first token.
    package var first: String
    /// The JSON array of the others; nil when there is one token.
    package var more: String?
    /// How many tokens there are.
    package var count: Int

    /// The columns for `tokens` (at least one).
    package init(_ tokens: [String]) {
        precondition(!tokens.isEmpty, "an outbox entry has at least one token")
        self.first = tokens[0]
        self.count = tokens.count
        if tokens.count == 1 {
            self.more = nil
        } else {
            guard let bytes = try? JSONText.encode(.array(tokens.dropFirst().map { .string($0) })) else {
                preconditionFailure("an array of strings always has a JSON text")
            }
            self.more = String(decoding: bytes, as: UTF8.self)
        }
    }

    /// The tokens a row holds.
    /// - Throws: ``StoreError/corruptRow(_:)`` when `more` is not a JSON array of strings.
    package static func tokens(first: String, more: String?) throws -> [String] {
        guard let more else { return [first] }
        guard case .array(let values)? = try? JSONParser.parse(Array(more.utf8)) else {
            throw StoreError.corruptRow("unreadable outbox tokens")
        }
        var tokens = [first]
        tokens.reserveCapacity(values.count + 1)
        for value in values {
            guard case .string(let token) = value else { throw StoreError.corruptRow("unreadable outbox tokens") }
            tokens.append(token)
        }
        return tokens
    }
}
