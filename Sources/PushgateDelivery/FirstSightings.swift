import Synchronization

/// When each key was first seen in its current spell, so that something is done once a spell (a log line)
/// and a spell's age can be asked. A spell ends when the key goes unseen for longer than `gap`, or when
/// the epoch a sighting gives differs from the spell's (a reload, which may have configured the app).
final class FirstSightings: Sendable {
    private struct Spell {
        var first: ContinuousClock.Instant
        var last: ContinuousClock.Instant
        var epoch: Int
    }
    private let spells = Mutex<[String: Spell]>([:])
    private let gap: Duration

    /// Sightings whose spells end after `gap` unseen.
    init(gap: Duration) {
        self.gap = gap
    }

    /// Records a sighting of `key` at `now` in `epoch`: whether it begins a spell, and how long the spell
    /// has lasted.
    func sight(_ key: String, epoch: Int = 0, now: ContinuousClock.Instant = .now) -> (isFirst: Bool, age: Duration) {
        self.spells.withLock { spells in
            if var spell = spells[key], spell.epoch == epoch, now - spell.last <= self.gap {
                spell.last = now
                spells[key] = spell
                return (false, now - spell.first)
            }
            spells[key] = Spell(first: now, last: now, epoch: epoch)
            return (true, .zero)
        }
    }
}
