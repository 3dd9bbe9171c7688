import Testing
import PushgateFCM

@Suite("FCM placeholder")
struct PlaceholderFCMTests {
    @Test func moduleLinks() {
        #expect(String(describing: FCM.self) == "FCM")
    }
}
