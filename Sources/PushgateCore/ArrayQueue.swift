/// A first-in, first-out queue over an array: taking the first element moves an index instead of shifting
/// the rest, and the slots taken are given back when the queue empties, or once they are 1,024 or more and
/// at least half the array. Appending and taking cost O(1), amortized.
public struct ArrayQueue<Element> {
    @usableFromInline var elements: [Element] = []
    @usableFromInline var head = 0

    /// An empty queue.
    @inlinable public init() {}

    /// The oldest element, or nil when the queue is empty.
    @inlinable public var first: Element? { self.head < self.elements.count ? self.elements[self.head] : nil }

    /// How many elements wait.
    @inlinable public var count: Int { self.elements.count - self.head }

    /// Whether no element waits.
    @inlinable public var isEmpty: Bool { self.head == self.elements.count }

    /// Keeps room for `capacity` elements.
    @inlinable public mutating func reserveCapacity(_ capacity: Int) {
        self.elements.reserveCapacity(capacity)
    }

    /// Adds `element` after the others.
    @inlinable public mutating func append(_ element: Element) {
        self.elements.append(element)
    }

    /// Takes the oldest element, or returns nil when the queue is empty.
    @inlinable @discardableResult public mutating func popFirst() -> Element? {
        guard self.head < self.elements.count else { return nil }
        let element = self.elements[self.head]
        self.head += 1
        if self.head == self.elements.count {
            self.elements.removeAll(keepingCapacity: true)
            self.head = 0
        } else if self.head >= 1_024, self.head * 2 >= self.elements.count {
            self.elements.removeFirst(self.head)
            self.head = 0
        }
        return element
    }
}

extension ArrayQueue: Sendable where Element: Sendable {}
