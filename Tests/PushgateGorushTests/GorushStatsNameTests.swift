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

    /// Each count in memory goes to its own counter, and each platform's outcomes to that platform's.
    @Test func eachTallyWritesItsOwnCounter() {
        let names = GorushStats.Tally.allCases.map(\.name)
        #expect(Set(names).count == GorushStats.Tally.allCases.count)
        #expect(names.contains(GorushStats.Name.total) && names.contains(GorushStats.Name.submitted))
        #expect(names.contains(GorushStats.Name.succeededTasks) && names.contains(GorushStats.Name.failedTasks))
        for platform in [GorushNotification.Platform.ios, .android, .huawei] {
            #expect(GorushStats.Tally.success(platform).name == GorushStats.Name.success(platform))
            #expect(GorushStats.Tally.error(platform).name == GorushStats.Name.error(platform))
        }
    }
}
