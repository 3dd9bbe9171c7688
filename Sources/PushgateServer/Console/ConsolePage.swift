import Foundation
import PushgateCore
import PushgateDelivery
import PushgateHTTP

/// The console's HTML, rendered on the server so the figures show without JavaScript; `console.js`
/// refreshes them and draws the chart, `console.css` lays them out. No inline script or style.
enum ConsolePage {
    /// What a page needs to know about who is looking.
    struct Viewer: Sendable {
        var admin: ConsoleAdmins.Admin
        var csrfToken: String?
        /// Whether the console is open to loopback clients without a token (the built-in sandbox).
        var openToLoopback = false
    }

    /// The outcome of a test push, shown under its form.
    struct TestPushResult: Sendable {
        var app: String
        var outcome: String
        var reason: String?
    }

    static func document(title: String, body: String) -> String {
        """
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(HTMLText.escape(title))</title>
        <link rel="stylesheet" href="/console/assets/console.css">
        <script src="/console/assets/console.js" defer></script>
        </head>
        <body>
        \(body)
        </body>
        </html>

        """
    }

    static func signIn(message: String?) -> String {
        let note = message.map { #"<p class="error" role="alert" data-testid="sign-in-error">\#(HTMLText.escape($0))</p>"# } ?? ""
        return self.document(
            title: "Sign in · Pushgate console",
            body: """
                <main class="narrow">
                <h1>Pushgate console</h1>
                \(note)
                <form method="post" action="/console/session" data-testid="sign-in-form">
                <label for="token">Admin token</label>
                <input id="token" name="token" type="password" autocomplete="current-password" required>
                <button type="submit">Sign in</button>
                </form>
                </main>
                """
        )
    }

    static func overview(_ overview: ConsoleOverview, viewer: Viewer, testPush: TestPushResult? = nil) -> String {
        var body = "<header><h1>Pushgate console</h1>"
        body += #"<p class="who">Signed in as <code>\#(HTMLText.escape(viewer.admin.fingerprint))</code>\#(viewer.admin.readOnly ? " (read-only)" : "")</p>"#
        if let csrf = viewer.csrfToken {
            body += #"<form method="post" action="/console/session/end" class="inline"><input type="hidden" name="csrf" value="\#(csrf)"><button type="submit" data-testid="sign-out">Sign out</button></form>"#
        }
        body += "</header>\n"
        if viewer.openToLoopback {
            body += #"<p class="banner" role="status" data-testid="sandbox-banner">Built-in sandbox: the console is open without a token to clients on this machine only.</p>"#
        }
        // Always there, hidden without a problem, so that the live refresh can show one (console.js).
        if let problem = overview.problem {
            body += #"<p class="error" role="alert" data-testid="problem">\#(HTMLText.escape(problem))</p>"#
        } else {
            body += #"<p class="error" role="alert" data-testid="problem" hidden></p>"#
        }
        body += "<main>\n"
        body += self.gateway(overview)
        body += self.apps(overview)
        body += self.chart(overview)
        body += self.frontEnds(overview)
        body += self.failures(overview)
        body += self.credentials(overview)
        body += self.testPushForm(overview, viewer: viewer, result: testPush)
        body += "</main>\n"
        return self.document(title: "Pushgate console", body: body)
    }

    private static func gateway(_ overview: ConsoleOverview) -> String {
        """
        <section aria-labelledby="gateway-title"><h2 id="gateway-title">Gateway</h2>
        <dl class="facts">
        <dt>Version</dt><dd data-testid="gateway-version">\(HTMLText.escape(overview.version))</dd>
        <dt>Uptime</dt><dd data-testid="gateway-uptime">\(self.duration(overview.uptimeSeconds))</dd>
        <dt>Configuration generation</dt><dd data-testid="gateway-generation">\(overview.configurationGeneration)</dd>
        <dt>Store</dt><dd data-testid="gateway-store">\(HTMLText.escape(overview.store)), \(overview.storeHealthy ? "answering" : "not answering")</dd>
        <dt>Outbox</dt><dd><span data-testid="outbox-total">\(overview.outboxPending)</span> pending, oldest <span data-testid="outbox-oldest">\(self.duration(overview.outboxOldestAgeSeconds))</span></dd>
        <dt>Instances</dt><dd data-testid="gateway-instances">\(overview.instances.map(HTMLText.escape).joined(separator: ", "))</dd>
        </dl></section>

        """
    }

    private static func apps(_ overview: ConsoleOverview) -> String {
        var html = """
            <section aria-labelledby="apps-title"><h2 id="apps-title">Apps</h2>
            <div class="scroll"><table data-testid="apps-table">
            <caption>Deliveries by outcome in the last hour (last 24 hours in brackets)</caption>
            <thead><tr><th scope="col">App</th><th scope="col">Type</th><th scope="col">Endpoint</th><th scope="col">Delivered</th><th scope="col">Invalid token</th><th scope="col">Retry later</th><th scope="col">Rejected</th><th scope="col">Outbox</th><th scope="col">Provider</th></tr></thead>
            <tbody>

            """
        for app in overview.apps {
            let id = HTMLText.escape(app.id)
            html += #"<tr data-testid="app-row" data-app-id="\#(id)"><th scope="row">\#(id)</th><td>\#(HTMLText.escape(app.type))</td><td>\#(HTMLText.escape(app.endpoint))</td>"#
            for outcome in ConsoleOverview.Outcomes.names {
                let name = String(outcome.map { $0 == "_" ? "-" : $0 })
                html += #"<td><span data-testid="count-\#(name)">\#(app.lastHour.value(outcome))</span> <span class="day" data-testid="day-\#(name)">(\#(app.lastDay.value(outcome)))</span></td>"#
            }
            html += #"<td><span data-testid="outbox-pending">\#(app.outboxPending)</span> <span class="day" data-testid="outbox-age">\#(self.duration(app.outboxOldestAgeSeconds))</span></td>"#
            html += #"<td><span data-testid="provider-state">\#(self.providerState(app.state))</span></td></tr>"#
            html += "\n"
        }
        html += "</tbody></table></div></section>\n"
        return html
    }

    /// The colours of the outcomes, in ``ConsoleOverview/Outcomes/names`` order (the CSS classes too).
    static func chartSVG(_ chart: [ConsoleOverview.Minute]) -> String {
        let width = 600.0
        let height = 160.0
        let peak = max(1, chart.map { minute in ConsoleOverview.Outcomes.names.map { minute.outcomes.value($0) }.max() ?? 0 }.max() ?? 1)
        var svg = #"<svg data-testid="chart" class="chart" viewBox="0 0 600 170" role="img" aria-label="Deliveries per minute by outcome, last hour" preserveAspectRatio="none">"#
        svg += #"<line class="axis" x1="0" y1="160" x2="600" y2="160"></line>"#
        for outcome in ConsoleOverview.Outcomes.names {
            let points = chart.enumerated().map { index, minute in
                let x = chart.count > 1 ? Double(index) * width / Double(chart.count - 1) : 0
                let y = height - Double(minute.outcomes.value(outcome)) * (height - 10) / Double(peak)
                return "\(Int(x.rounded())),\(Int(y.rounded()))"
            }
            svg += #"<polyline class="line \#(outcome)" data-outcome="\#(outcome)" points="\#(points.joined(separator: " "))"></polyline>"#
        }
        svg += "</svg>"
        return svg
    }

    private static func chart(_ overview: ConsoleOverview) -> String {
        let legend = ConsoleOverview.Outcomes.names.map { #"<li><span class="swatch \#($0)"></span>\#(String($0.map { $0 == "_" ? " " : $0 }))</li>"# }
        return """
            <section aria-labelledby="chart-title"><h2 id="chart-title">Deliveries per minute, last hour</h2>
            <div id="chart-box">\(self.chartSVG(overview.chart))</div>
            <ul class="legend">\(legend.joined())</ul>
            </section>

            """
    }

    /// The front ends' names as the page writes them.
    static func frontEndTitle(_ name: String) -> String {
        switch name {
        case "matrix": "Matrix"
        case "nextcloud": "Nextcloud"
        case "status": "Status"
        default: name
        }
    }

    private static func frontEnds(_ overview: ConsoleOverview) -> String {
        var html = """
            <section aria-labelledby="front-ends-title"><h2 id="front-ends-title">Front ends</h2>
            <p class="note">Counts of every instance on this store since it was made (gorush's as <code>/api/stat/app</code> gives them); the Waku node's state and last poll are this instance's.</p>
            <div class="front-ends">

            """
        for section in overview.frontEnds {
            let name = HTMLText.escape(section.name)
            html += #"<div class="front-end" data-testid="front-end" data-front-end="\#(name)"><h3>\#(HTMLText.escape(self.frontEndTitle(section.name)))</h3>"#
            if let figures = section.figures {
                html += #"<dl class="facts">"#
                for figure in figures {
                    let key = HTMLText.escape(figure.key)
                    html += #"<dt>\#(HTMLText.escape(figure.label))</dt><dd data-testid="fe-\#(name)-\#(key)">\#(HTMLText.escape(ConsoleOverview.text(figure.value)))</dd>"#
                }
                html += "</dl>"
            } else {
                html += #"<p class="note" data-testid="fe-\#(name)-state">not configured</p>"#
            }
            html += "</div>\n"
        }
        html += "</div></section>\n"
        return html
    }

    private static func failures(_ overview: ConsoleOverview) -> String {
        var html = """
            <section aria-labelledby="failures-title"><h2 id="failures-title">Recent failures</h2>
            <p class="note">The last \(overview.failures.count) failed deliveries of this instance (at most 200), newest first.</p>
            <div class="scroll"><table data-testid="failures-table"><thead><tr><th scope="col">Time</th><th scope="col">App</th><th scope="col">Front end</th><th scope="col">Token</th><th scope="col">Outcome</th><th scope="col">Reason</th></tr></thead><tbody>

            """
        for failure in overview.failures {
            html += "<tr data-testid=\"failure-row\"><td>\(UTCTime.rfc3339(failure.time))</td><td>\(HTMLText.escape(failure.appID))</td><td>\(HTMLText.escape(failure.frontEnd))</td><td><code>\(HTMLText.escape(failure.tokenFingerprint))</code></td><td>\(HTMLText.escape(failure.outcome))</td><td>\(HTMLText.escape(failure.reason))</td></tr>\n"
        }
        html += "</tbody></table></div></section>\n"
        return html
    }

    private static func credentials(_ overview: ConsoleOverview) -> String {
        var html = """
            <section aria-labelledby="credentials-title"><h2 id="credentials-title">Credentials</h2>
            <div class="scroll"><table data-testid="credentials-table"><thead><tr><th scope="col">App</th><th scope="col">Kind</th><th scope="col">Identity</th><th scope="col">Expires</th><th scope="col">Warning</th></tr></thead><tbody>

            """
        if overview.credentials.isEmpty {
            html += "<tr><td colspan=\"5\">No credential with an expiry is configured (the sandbox makes its own at each start).</td></tr>\n"
        }
        for credential in overview.credentials {
            let expires = credential.expiresAt.map { UTCTime.rfc3339($0) } ?? "never"
            let warning = credential.warning.map { #"<strong class="warn">\#(HTMLText.escape($0))</strong>"# } ?? ""
            html += "<tr><td>\(HTMLText.escape(credential.app))</td><td>\(HTMLText.escape(credential.kind))</td><td>\(HTMLText.escape(credential.identity))</td><td>\(expires)</td><td>\(warning)</td></tr>\n"
        }
        html += "</tbody></table></div></section>\n"
        return html
    }

    private static func testPushForm(_ overview: ConsoleOverview, viewer: Viewer, result: TestPushResult?) -> String {
        var html = #"<section aria-labelledby="test-push-title"><h2 id="test-push-title">Test push</h2>"#
        if viewer.admin.readOnly {
            html += #"<p class="note">A read-only token cannot send test pushes.</p>"#
        } else {
            let options = overview.apps.map { #"<option value="\#(HTMLText.escape($0.id))">\#(HTMLText.escape($0.id)) (\#(HTMLText.escape($0.type)))</option>"# }
            html += """
                <form method="post" action="/console/test-push" data-testid="test-push-form">
                <input type="hidden" name="csrf" value="\(viewer.csrfToken ?? "")">
                <label for="test-app">App</label>
                <select id="test-app" name="app" required>\(options.joined())</select>
                <label for="test-token">Device token (for Web Push, the subscription JSON with its endpoint and keys)</label>
                <textarea id="test-token" name="token" rows="2" required autocomplete="off"></textarea>
                <label for="test-alert">Alert text</label>
                <input id="test-alert" name="alert" type="text" required autocomplete="off">
                <button type="submit">Send test push</button>
                </form>
                """
        }
        if let result {
            let reason = result.reason.map { ": " + HTMLText.escape($0) } ?? ""
            html += #"<p class="result \#(result.outcome == "delivered" ? "ok" : "bad")" role="status" data-testid="test-push-result" data-outcome="\#(HTMLText.escape(result.outcome))">\#(HTMLText.escape(result.app)): <strong>\#(HTMLText.escape(result.outcome))</strong>\#(reason)</p>"#
        }
        html += "</section>\n"
        return html
    }

    /// An app's provider as one line: latency, deliveries in flight, circuit and credentials.
    static func providerState(_ state: DeliveryAppState) -> String {
        var parts: [String] = []
        if let latency = state.latencyMilliseconds {
            parts.append("p50 \(ConsoleOverview.milliseconds(latency.p50)), p99 \(ConsoleOverview.milliseconds(latency.p99))")
        }
        parts.append("\(state.inFlight) in flight")
        parts.append(state.circuit == .perService ? "circuits per push service" : "circuit " + state.circuit.rawValue)
        if state.credentialsFailing { parts.append("credentials refused") }
        return parts.joined(separator: ", ")
    }

    /// Whole seconds as `1 d 2 h`, `3 h 4 min`, `5 min 6 s` or `7 s`.
    static func duration(_ seconds: Int64) -> String {
        let (days, hours, minutes, rest) = (seconds / 86_400, seconds % 86_400 / 3600, seconds % 3600 / 60, seconds % 60)
        if days > 0 { return "\(days) d \(hours) h" }
        if hours > 0 { return "\(hours) h \(minutes) min" }
        if minutes > 0 { return "\(minutes) min \(rest) s" }
        return "\(rest) s"
    }
}
