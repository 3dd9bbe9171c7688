import PushgateCore

/// The entries of one `POST /notifications` body, in the order the server numbered them.
///
/// Real servers send `application/x-www-form-urlencoded` with PHP array keys, `notifications[0]=<JSON>&…`
/// (Guzzle `form_params`); the published documentation shows JSON, `{"notifications": [<JSON string or
/// object>, …]}`, which is accepted too. An entry that is not valid JSON stays in the batch as malformed,
/// so it is counted as failed rather than dropping the whole batch.
struct NextcloudNotificationBatch: Sendable {
    /// Each entry, or why it could not be read.
    let entries: [Result<NextcloudNotificationEntry, NextcloudNotificationEntry.Malformed>]

    /// Why a body has no batch at all.
    struct Unreadable: Error, Equatable {
        let reason: String
    }

    /// Reads a body.
    /// - Parameters:
    ///   - body: the request body.
    ///   - isJSON: whether the request said `Content-Type: application/json`.
    init(body: String, isJSON: Bool) throws(Unreadable) {
        if isJSON {
            guard case .object(let object)? = try? JSONParser.parse(Array(body.utf8)), case .array(let list)? = object["notifications"] else {
                throw Unreadable(reason: "expected a JSON object with a notifications list")
            }
            self.entries = list.map { item in
                switch item {
                case .string(let text): Result { () throws(NextcloudNotificationEntry.Malformed) in try NextcloudNotificationEntry(json: text) }
                case .object(let members):
                    Result { () throws(NextcloudNotificationEntry.Malformed) in try NextcloudNotificationEntry(object: members) }
                default: .failure(NextcloudNotificationEntry.Malformed(reason: "not a JSON object"))
                }
            }
        } else {
            var numbered: [(index: Int, position: Int, text: String)] = []
            for (position, (name, value)) in NextcloudForm.pairs(Substring(body)).enumerated() {
                guard let index = Self.notificationIndex(name) else { continue }
                numbered.append((index, position, value))
            }
            guard !numbered.isEmpty else { throw Unreadable(reason: "expected notifications[N] form fields") }
            self.entries = numbered.sorted { ($0.index, $0.position) < ($1.index, $1.position) }.map { _, _, text in
                Result { () throws(NextcloudNotificationEntry.Malformed) in try NextcloudNotificationEntry(json: text) }
            }
        }
        guard !self.entries.isEmpty else { throw Unreadable(reason: "the batch has no entries") }
    }

    /// The `N` of a `notifications[N]` field name (`notifications[]` counts as the next one).
    static func notificationIndex(_ name: String) -> Int? {
        guard name.hasPrefix("notifications["), name.hasSuffix("]") else { return nil }
        let inner = name.dropFirst("notifications[".count).dropLast()
        if inner.isEmpty { return Int.max }
        return Int(inner)
    }
}
