@testable import PushgateSandbox
import PushgateTestSupport
import Testing

/// The sandbox's Waku store: pages in nwaku's order (timestamp, then hash), filtered by pubsub topic,
/// content topics and time, with the cursor continuing after the last message of the page before,
/// compared with a plain filter-and-sort of everything kept.
@Suite("Waku store archive")
struct WakuStoreArchiveTests {
    static let pubsubTopics = ["/waku/2/rs/16/32", "/waku/2/rs/16/64"]
    static let contentTopics = ["/a/1/x/proto", "/b/1/y/proto", "/c/1/z/proto"]

    /// Messages in a shuffled order, some sharing a timestamp, some ephemeral, some repeated.
    static func messages() -> [WakuEmulatedMessage] {
        var generator = SeededGenerator(seed: 7)
        var messages: [WakuEmulatedMessage] = []
        for index in 0..<600 {
            let timestamp = 1_000 + Int64(generator.next() % 300)
            messages.append(
                WakuEmulatedMessage(
                    pubsubTopic: Self.pubsubTopics[Int(generator.next() % 2)], payload: [UInt8(index & 0xff), UInt8(index >> 8)],
                    contentTopic: Self.contentTopics[Int(generator.next() % 3)], version: 0, timestamp: timestamp, ephemeral: index % 17 == 0
                )
            )
        }
        return messages + messages.prefix(40)
    }

    /// What a query must return, page after page: every kept match, in order.
    static func expected(
        _ messages: [WakuEmulatedMessage], pubsubTopic: String?, contentTopics: Set<String>, startTime: Int64?, endTime: Int64?, ascending: Bool
    ) -> [[UInt8]] {
        var seen: Set<[UInt8]> = []
        let kept = messages.filter { !$0.ephemeral && seen.insert($0.hash).inserted }
        let matching = kept.filter { message in
            (pubsubTopic.map { $0 == message.pubsubTopic } ?? true) && (contentTopics.isEmpty || contentTopics.contains(message.contentTopic))
                && (startTime.map { message.timestamp >= $0 } ?? true) && (endTime.map { message.timestamp <= $0 } ?? true)
        }
        let sorted = matching.map { ($0.timestamp, $0.hash) }.sorted { left, right in
            left.0 != right.0 ? left.0 < right.0 : left.1.lexicographicallyPrecedes(right.1)
        }.map(\.1)
        return ascending ? sorted : sorted.reversed()
    }

    @Test(arguments: [true, false])
    func pagesFollowTheStoresOrderAndFilters(ascending: Bool) {
        let messages = Self.messages()
        let archive = WakuStoreArchive()
        for message in messages { archive.keep(message) }
        let cases: [(String?, Set<String>, Int64?, Int64?)] = [
            (nil, [], nil, nil),
            (Self.pubsubTopics[0], [], nil, nil),
            (Self.pubsubTopics[1], [Self.contentTopics[0], Self.contentTopics[2]], 1_050, 1_200),
            (nil, [Self.contentTopics[1]], 1_100, nil),
            (Self.pubsubTopics[0], [], nil, 1_010),
            (nil, [], 2_000, nil),
        ]
        for (pubsubTopic, contentTopics, startTime, endTime) in cases {
            for pageSize in [1, 7, 100] {
                var received: [[UInt8]] = []
                var cursor: [UInt8]?
                var pages = 0
                repeat {
                    let page = archive.query(
                        pubsubTopic: pubsubTopic, contentTopics: contentTopics, startTime: startTime, endTime: endTime, cursor: cursor,
                        ascending: ascending, pageSize: pageSize
                    )
                    #expect(page.messages.count <= pageSize)
                    received += page.messages.map(\.hash)
                    cursor = page.cursor
                    if let cursor { #expect(cursor == page.messages.last?.hash) }
                    pages += 1
                } while cursor != nil && pages < 1_000
                let expected = Self.expected(
                    messages, pubsubTopic: pubsubTopic, contentTopics: contentTopics, startTime: startTime, endTime: endTime, ascending: ascending
                )
                #expect(received == expected, "topic \(pubsubTopic ?? "any"), \(contentTopics), \(startTime ?? 0)…\(endTime ?? 0), pages of \(pageSize)")
            }
        }
    }

    @Test func anUnknownCursorStartsFromTheBeginning() {
        let archive = WakuStoreArchive()
        let messages = Self.messages()
        for message in messages { archive.keep(message) }
        let page = archive.query(
            pubsubTopic: nil, contentTopics: [], startTime: 1_100, endTime: nil, cursor: [UInt8](repeating: 9, count: 32), ascending: true, pageSize: 5
        )
        let expected = Self.expected(messages, pubsubTopic: nil, contentTopics: [], startTime: 1_100, endTime: nil, ascending: true)
        #expect(page.messages.map(\.hash) == Array(expected.prefix(5)))
    }
}

