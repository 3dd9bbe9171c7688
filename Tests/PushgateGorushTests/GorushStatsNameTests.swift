@testable import PushgateGorush
import Testing

@Suite("gorush store counter names")
struct GorushStatsNameTests {
    /// The names are what earlier versions wrote to the store: a rename would restart every total that
    /// `GET /api/stat/app` reports.
    @Test func namesAreThoseAlreadyInTheStore() {
        let platforms: [GorushNotification.Platform] = [.ios, .android, .huawei]
        #expect(platforms.map(GorushStats.Name.success) == ["gorush:ios-success-count", "gorush:android-success-count", "gorush:huawei-success-count"])
        #expect(platforms.map(GorushStats.Name.error) == ["gorush:ios-error-count", "gorush:android-error-count", "gorush:huawei-error-count"])
    }
}
