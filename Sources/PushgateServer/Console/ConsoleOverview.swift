import Foundation
import PushgateCore
import PushgateDelivery
import PushgateHTTP

/// What the console's overview shows, as the page and `GET /console/api/overview` give it. It holds no
/// token, key or notification content: tokens appear as fingerprints only.
struct ConsoleOverview: Sendable {
    /// Deliveries by outcome.
    struct Outcomes: Sendable, Equatable {
        var delivered: Int64 = 0
        var invalidToken: Int64 = 0
        var retryLater: Int64 = 0
        var rejected: Int64 = 0

        /// The outcomes, with the names scripts and the page use.
        static let names = ["delivered", "invalid_token", "retry_later", "rejected"]

        mutating func add(_ outcome: String, _ count: Int64) {
            switch outcome {
            case "delivered": self.delivered += count
            case "invalid_token": self.invalidToken += count
            case "retry_later", "credentials_refused": self.retryLater += count
            case "rejected": self.rejected += count
            default: break
            }
        }

        func value(_ outcome: String) -> Int64 {
            switch outcome {
            case "delivered": self.delivered
            case "invalid_token": self.invalidToken
            case "retry_later": self.retryLater
            case "rejected": self.rejected
            default: 0
            }
        }

        var json: JSONValue {
            .object(Dictionary(uniqueKeysWithValues: Self.names.map { ($0, JSONValue.number(Double(self.value($0)))) }))
        }
    }

    /// One app's row.
    struct AppRow: Sendable {
        var id: String
        var type: String
        var endpoint: String
        var lastHour = Outcomes()
        var lastDay = Outcomes()
        var outboxPending = 0
        var outboxOldestAgeSeconds: Int64 = 0
        /// In flight, circuit, credentials and latency on this instance.
        var state = DeliveryAppState(inFlight: 0, circuitOpen: false, credentialsFailing: false, latencyMilliseconds: nil)
    }

    /// One credential's line.
    struct Credential: Sendable {
        var app: String
        var kind: String
        var identity: String
        var expiresAt: Date?
        /// `expired`, `1 day`, `7 days`, `30 days` or nil when further off or never.
        var warning: String?
    }

    /// One front end's section: its figures, or none when it is not configured.
    struct FrontEndSection: Sendable {
        /// The front end's name (`matrix`, `nextcloud`, `gorush`, `status`).
        var name: String
        /// Its figures; nil when it is not configured.
        var figures: [FrontEndFigure]?
    }

    /// One minute of the chart.
    struct Minute: Sendable {
        var minute: Int64
        var outcomes: Outcomes
    }

    var version: String
    var uptimeSeconds: Int64
    var configurationGeneration: Int
    var store: String
    var storeHealthy: Bool
    var sandbox: Bool
    var apps: [AppRow]
    var outboxPending: Int
    var outboxOldestAgeSeconds: Int64
    var credentials: [Credential]
    var chart: [Minute]
    var failures: [RecentFailures.Failure]
    var instances: [String]
    var frontEnds: [FrontEndSection] = []
    /// Set when some figures could not be read (the store did not answer); the rest is shown.
    var problem: String?

    /// A front end's figure in JSON: a number, a string, or a time (RFC 3339, null when none).
    static func json(_ value: FrontEndFigure.Value) -> JSONValue {
        switch value {
        case .count(let count): .number(Double(count))
        case .text(let text): .string(text)
        case .time(let time): time.map { .string(UTCTime.rfc3339($0)) } ?? .null
        }
    }

    /// A front end's figure as the page shows it: a time with a space between date and time of day, so
    /// that a narrow card breaks the line there rather than inside either.
    static func text(_ value: FrontEndFigure.Value) -> String {
        switch value {
        case .count(let count): String(count)
        case .text(let text): text
        case .time(let time): time.map { UTCTime.rfc3339($0).replacing("T", with: " ", maxReplacements: 1) } ?? "never"
        }
    }

    /// `value` rounded to a tenth.
    static func tenths(_ value: Double) -> Double {
        (value * 10).rounded() / 10
    }

    /// Milliseconds as text with one decimal, without Foundation's formatting.
    static func milliseconds(_ value: Double) -> String {
        let tenths = Int((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10) ms"
    }

    var json: JSONValue {
        var object: [String: JSONValue] = [
            "gateway": [
                "version": .string(self.version), "uptime_seconds": .number(Double(self.uptimeSeconds)),
                "configuration_generation": .number(Double(self.configurationGeneration)), "store": .string(self.store),
                "store_healthy": .bool(self.storeHealthy), "sandbox": .bool(self.sandbox),
            ],
            "apps": .array(self.apps.map { app -> JSONValue in
                [
                    "id": .string(app.id), "type": .string(app.type), "endpoint": .string(app.endpoint), "last_hour": app.lastHour.json,
                    "last_day": app.lastDay.json, "outbox_pending": .number(Double(app.outboxPending)),
                    "outbox_oldest_age_seconds": .number(Double(app.outboxOldestAgeSeconds)),
                    "in_flight": .number(Double(app.state.inFlight)), "circuit": .string(app.state.circuit.rawValue),
                    "credentials": .string(app.state.credentialsFailing ? "refused" : "accepted"),
                    "latency_ms": app.state.latencyMilliseconds.map { ["p50": .number(Self.tenths($0.p50)), "p99": .number(Self.tenths($0.p99))] } ?? .null,
                ]
            }),
            "outbox": ["pending": .number(Double(self.outboxPending)), "oldest_age_seconds": .number(Double(self.outboxOldestAgeSeconds))],
            "credentials": .array(self.credentials.map { credential -> JSONValue in
                [
                    "app": .string(credential.app), "kind": .string(credential.kind), "identity": .string(credential.identity),
                    "expires_at": credential.expiresAt.map { .string(UTCTime.rfc3339($0)) } ?? .null,
                    "warning": credential.warning.map(JSONValue.string) ?? .null,
                ]
            }),
            "chart": .array(self.chart.map { minute -> JSONValue in
                var point = minute.outcomes.json
                if case .object(var members) = point {
                    members["minute"] = .number(Double(minute.minute))
                    point = .object(members)
                }
                return point
            }),
            "recent_failures": .array(self.failures.map { failure -> JSONValue in
                [
                    "time": .string(UTCTime.rfc3339(failure.time)), "app": .string(failure.appID), "front_end": .string(failure.frontEnd),
                    "token": .string(failure.tokenFingerprint), "outcome": .string(failure.outcome), "reason": .string(failure.reason),
                ]
            }),
            "instances": .array(self.instances.map(JSONValue.string)),
            "front_ends": .array(self.frontEnds.map { section -> JSONValue in
                var figures: [String: JSONValue] = [:]
                var shown: [String: JSONValue] = [:]
                for figure in section.figures ?? [] {
                    figures[figure.key] = Self.json(figure.value)
                    shown[figure.key] = .string(Self.text(figure.value))
                }
                // `shown` is each figure as the page writes it, so the page's script shows what the page would.
                return ["name": .string(section.name), "configured": .bool(section.figures != nil), "figures": .object(figures), "shown": .object(shown)]
            }),
        ]
        if let problem = self.problem { object["problem"] = .string(problem) }
        return .object(object)
    }
}
