import Testing
import PushgateWebPush

@Suite("WebPush placeholder")
struct PlaceholderWebPushTests {
    @Test func moduleLinks() {
        #expect(String(describing: WebPush.self) == "WebPush")
    }
}
