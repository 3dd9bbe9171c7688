import Testing
import PushgateAPNs

@Suite("APNs placeholder")
struct PlaceholderAPNsTests {
    @Test func moduleLinks() {
        #expect(String(describing: APNs.self) == "APNs")
    }
}
