import PushgateConfig
import Testing

@Suite("Configuration: console")
struct ConsoleSettingsTests {
    static let token = "0123456789abcdef-admin"
    static let viewer = "fedcba9876543210-viewer"

    @Test func theConsoleIsOffWithoutTokensAndOnWithThem() throws {
        #expect(!GatewayConfiguration().console.isEnabled)
        #expect(!(try GatewayConfiguration(yaml: "console: {}")).console.isEnabled)
        let on = try GatewayConfiguration(yaml: """
            console:
              admin_tokens:
                - '\(Self.token)'
                - {token: '\(Self.viewer)', read_only: true}
            """)
        #expect(on.console.isEnabled)
        #expect(on.console.adminTokens == [.init(token: Self.token), .init(token: Self.viewer, readOnly: true)])
        #expect(on.warnings.isEmpty)
        let off = try GatewayConfiguration(yaml: "console: {enabled: false, admin_tokens: ['\(Self.token)']}")
        #expect(!off.console.isEnabled)
    }

    @Test func theDescriptionNeverShowsATokenAndBadTokensAreNamedByTheirPlaceOnly() throws {
        let configuration = try GatewayConfiguration(yaml: "console: {admin_tokens: ['\(Self.token)', {token: '\(Self.viewer)', read_only: true}]}")
        #expect(configuration.console.description == "console: on, 2 admin tokens (1 read-only)")
        #expect(!"\(configuration.console)".contains(Self.token))
        let short = "short"
        let error = #expect(throws: ConfigurationError.self) { try GatewayConfiguration(yaml: "console: {admin_tokens: ['\(short)']}") }
        #expect(error.map { "\($0)" }?.contains("console.admin_tokens[0]") == true)
        #expect(error.map { "\($0)" }?.contains(short) == false)
        #expect(throws: ConfigurationError.self) { try GatewayConfiguration(yaml: "console: {enabled: true}") }
        #expect(throws: ConfigurationError.self) { try GatewayConfiguration(yaml: "console: {admin_tokens: [{read_only: true}]}") }
        #expect(throws: ConfigurationError.self) { try GatewayConfiguration(yaml: "console: {admin_tokens: '\(Self.token)'}") }
        let unknown = try GatewayConfiguration(yaml: "console: {admin_tokens: ['\(Self.token)'], colour: blue}")
        #expect(unknown.warnings == ["unknown key console.colour (ignored)"])
    }
}
