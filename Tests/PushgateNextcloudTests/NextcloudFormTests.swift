import Foundation
@testable import PushgateNextcloud
import Testing

@Suite("Nextcloud form decoding")
struct NextcloudFormTests {
    @Test func decodesAsPHPEncodes() {
        let pairs = NextcloudForm.pairs("notifications%5B0%5D=%7B%22a%22%3A%22b%5C%2Fc%2B%3D%22%7D&x=hello+world&empty=&flag&%C3%BC=%E2%9C%93")
        #expect(pairs.map(\.0) == ["notifications[0]", "x", "empty", "flag", "ü"])
        #expect(pairs.map(\.1) == [#"{"a":"b\/c+="}"#, "hello world", "", "", "✓"])
    }

    @Test func skipsPairsWithBrokenEscapesOrBytesThatAreNotUTF8() {
        let pairs = NextcloudForm.pairs("good=1&bad=%2&worse=%zz&latin=%E9&&also=2&")
        #expect(pairs.map(\.0) == ["good", "also"])
        #expect(NextcloudForm.parse("a=1&a=2&b=%41") == ["a": "2", "b": "A"])
        #expect(NextcloudForm.pairs("").isEmpty)
    }

    /// Values are scanned for `+` and `%` eight bytes a step: each is found at every offset of a word, and
    /// every value decodes as Foundation's percent decoding does.
    @Test func decodesAnEscapeAtEveryOffset() {
        for length in 0...40 {
            for offset in 0...length {
                for escape in ["+", "%2B", "%2F", "%C3%BC", "%", "%4", "%zz", "%FF", "&", "="] {
                    let value = String(repeating: "a", count: offset) + escape + String(repeating: "b", count: length - offset)
                    let expected = value.contains("&") ? nil : value.replacingOccurrences(of: "+", with: " ").removingPercentEncoding
                    let pairs = NextcloudForm.pairs(Substring("x=" + value + "&y=1"))
                    if value.contains("&") {
                        #expect(pairs.map(\.0).contains("y"))
                    } else if let expected {
                        #expect(pairs.map(\.0) == ["x", "y"], "\(value)")
                        #expect(pairs.first?.1 == expected, "\(value)")
                    } else {
                        #expect(pairs.map(\.0) == ["y"], "\(value)")
                    }
                }
            }
        }
    }
}
