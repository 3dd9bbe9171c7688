import Synchronization

/// When each key was first seen in its current spell (a spell ends when the key goes unseen for longer
/// than `gap`), so that something is done once a spell (a log line) and a spell's age can be asked.
final class FirstSightings: Sendable {
    private struct Spell {
        var first: ContinuousClock.Instant
        var last: ContinuousClock.Instant
    }
    private let spells = Mutex<[String: Spell]>([:])
    private let gap: Duration

    /// Sightings whose spells end after `gap` unseen.
    init(gap: Duration) {
        self.gap = gap
    }

    /// Records a sighting of `key` at `now`: whether it begins a spell, and how long the spell has lasted.
    func sight(_ key: String, now: ContinuousClock.Instant = .now) -> (isFirst: Bool, age: Duration) {
        self.spells.withLock { spells in
            if var spell = spells[key], now - spell.last <= self.gap {
                spell.last = now
                spells[key] = spell
                return (false, now - spell.first)
            }
            spells[key] = Spell(first: now, last: now)
            return (true, .zero)
        }
    }
}
