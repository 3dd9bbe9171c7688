import Foundation
import PushgateCore
import Synchronization

/// The console's sign-in sessions, kept in this instance's memory (a session started on one instance is
/// unknown to the others): a random 256-bit id (the cookie), the admin it acts as and a CSRF token of its
/// own. A session ends after ``lifetime`` or at sign-out.
final class ConsoleSessions: Sendable {
    /// One session.
    struct Session: Sendable {
        var id: String
        var admin: ConsoleAdmins.Admin
        /// What every state-changing request of the session must carry.
        var csrfToken: String
        var expires: ContinuousClock.Instant
    }

    /// How long a session lasts.
    let lifetime: Duration
    /// The most sessions kept; the oldest go first beyond it.
    let capacity: Int
    private let sessions = Mutex<[String: Session]>([:])

    init(lifetime: Duration = .seconds(12 * 3600), capacity: Int = 10_000) {
        self.lifetime = lifetime
        self.capacity = capacity
    }

    /// Starts a session for `admin`.
    func start(for admin: ConsoleAdmins.Admin) -> Session {
        let now = ContinuousClock.now
        let session = Session(
            id: Hex.lowercase(SecureRandomPool.shared.bytes(32)), admin: admin, csrfToken: Hex.lowercase(SecureRandomPool.shared.bytes(16)),
            expires: now + self.lifetime
        )
        let capacity = self.capacity
        self.sessions.withLock { sessions in
            if sessions.count >= capacity {
                sessions = sessions.filter { $0.value.expires > now }
                if sessions.count >= capacity, let oldest = sessions.min(by: { $0.value.expires < $1.value.expires }) {
                    sessions[oldest.key] = nil
                }
            }
            sessions[session.id] = session
        }
        return session
    }

    /// The live session with this id, if any.
    func session(id: String) -> Session? {
        let now = ContinuousClock.now
        return self.sessions.withLock { sessions in
            guard let session = sessions[id] else { return nil }
            guard session.expires > now else {
                sessions[id] = nil
                return nil
            }
            return session
        }
    }

    /// Ends every session `isKept` refuses.
    func keep(where isKept: (Session) -> Bool) {
        self.sessions.withLock { sessions in sessions = sessions.filter { isKept($0.value) } }
    }

    /// Ends a session.
    func end(id: String) {
        _ = self.sessions.withLock { $0.removeValue(forKey: id) }
    }
}
