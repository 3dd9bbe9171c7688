import PushgateProviderSupport
import Testing

/// Which configured ids may stand in a request path as they are.
@Suite("URL path segment")
struct URLPathSegmentTests {
    @Test(arguments: ["example-project", "101234567", "example.com:my-project", "a_b~c", "x@y", "a!$&'()*+,;=b"])
    func plainSegmentsAreAccepted(_ text: String) {
        #expect(URLPathSegment.isPlain(text))
    }

    @Test(arguments: ["", "a/b", "a?b", "a#b", "a b", "a%20b", "a\nb", "é", "a\\b", "a[b]", "a\"b"])
    func segmentsThatChangeTheURLAreRefused(_ text: String) {
        #expect(!URLPathSegment.isPlain(text))
    }
}
