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
}
