import Foundation
import Logging
import PushgateCore
import PushgateStore
import ServiceLifecycle

/// Records this instance in the store every ``interval`` (name, now, version, start), so that the
/// operator console of any instance on a shared PostgreSQL lists every instance seen in the last
/// minute; and deletes the records of instances gone for a day. Every call has the store's deadline.
struct InstanceHeartbeat: Service {
    /// How often the heartbeat is written.
    static let interval: Duration = .seconds(15)
    /// How long an instance is listed after its last heartbeat.
    static let listedFor: TimeInterval = 60
    /// How long the record of an instance that stopped is kept.
    static let keptFor: TimeInterval = 86_400

    let store: BoundedStore
    /// This instance's name.
    let name: String
    /// When this instance started.
    let started: Date
    let logger: Logger

    /// Beats until graceful shutdown; purges once an hour (the first time at start).
    func run() async throws {
        await cancelWhenGracefulShutdown {
            var lastPurge: ContinuousClock.Instant?
            while !Task.isCancelled {
                await self.beat()
                if lastPurge.map({ $0.duration(to: .now) >= .seconds(3600) }) ?? true {
                    await self.purge()
                    lastPurge = .now
                }
                do {
                    try await Task.sleep(for: Self.interval)
                } catch {
                    return
                }
            }
        }
    }

    /// Writes one heartbeat.
    func beat(now: Date = Date()) async {
        do {
            try await self.store.recordInstance(InstanceRecord(name: self.name, lastSeen: now, version: PushgateVersion.current, started: self.started))
        } catch {
            self.logger.debug("could not record this instance's heartbeat", metadata: ["error": "\(error)"])
        }
    }

    /// Deletes the records of instances not seen for ``keptFor``.
    func purge(now: Date = Date()) async {
        do {
            _ = try await self.store.purgeInstances(seenBefore: now.addingTimeInterval(-Self.keptFor))
        } catch {
            self.logger.debug("could not delete old instance records", metadata: ["error": "\(error)"])
        }
    }

    /// This process's name among instances: its host name and process id.
    static var processName: String {
        "\(ProcessInfo.processInfo.hostName)/\(ProcessInfo.processInfo.processIdentifier)"
    }
}
