import HashTreeCollections
import Synchronization

/// A hashable, sendable wrapper for a key path, used to find the index declared on it.
@usableFromInline
struct KeyPathKey: Hashable, Sendable {
    @usableFromInline
    let keyPath: any AnyKeyPath & Sendable
    /// For a declared index's key path: the last other key path object found equal to it
    /// (see ``matches(_:)``); nil for a key path a query carries.
    @usableFromInline
    let aliases: KeyPathAliases?

    @inlinable
    init(keyPath: any AnyKeyPath & Sendable) {
        self.keyPath = keyPath
        self.aliases = nil
    }

    /// The key path of a declared index, which remembers the last equal key path object
    /// it was compared with.
    @inlinable
    init(declaring keyPath: any AnyKeyPath & Sendable) {
        self.keyPath = keyPath
        self.aliases = KeyPathAliases()
    }

    /// Whether `other` names the same path. Comparing two key path objects walks their
    /// components (tens of nanoseconds), and every query passes its own literal's object,
    /// so a declared key path remembers the last object found equal and recognizes it
    /// again by identity. O(1).
    @inlinable
    func matches(_ other: AnyKeyPath) -> Bool {
        if keyPath === other { return true }
        guard let aliases else { return keyPath == other }
        if aliases.isKnown(other) { return true }
        guard keyPath == other else { return false }
        aliases.remember(other)
        return true
    }

    @usableFromInline
    static func == (lhs: KeyPathKey, rhs: KeyPathKey) -> Bool {
        lhs.keyPath == rhs.keyPath
    }

    @usableFromInline
    func hash(into hasher: inout Hasher) {
        hasher.combine(keyPath)
    }
}

/// The field path a key path names, e.g. `"authorID"` for `\Book.authorID` and
/// `"meta.rating"` for `\Book.meta.rating`.
@usableFromInline
func fieldPath(of keyPath: AnyKeyPath) -> String {
    let description = keyPath.debugDescription
    guard let dot = description.firstIndex(of: ".") else { return description }
    return String(description[description.index(after: dot)...])
}

/// The last key path object found equal to a declared one, held strongly so that its
/// address names it alone while it is here.
///
/// Lock-free and sound: a reader compares the address of a key path it holds alive with
/// the slot. The object in the slot was retained when the reader loaded it, so if both
/// addresses are equal the reader's object is that object (two live objects never share
/// an address), even if the slot changes right after.
@usableFromInline
final class KeyPathAliases: Sendable {
    /// The address of the remembered key path (retained), or 0.
    @usableFromInline
    let slot = Atomic<UInt>(0)

    @inlinable
    init() {}

    deinit {
        Self.release(slot.load(ordering: .acquiring))
    }

    /// Whether `keyPath` is the remembered object. O(1).
    @inlinable
    func isKnown(_ keyPath: AnyKeyPath) -> Bool {
        slot.load(ordering: .acquiring) == UInt(bitPattern: Unmanaged.passUnretained(keyPath).toOpaque())
    }

    /// Remembers `keyPath` in place of the previous one. O(1).
    @usableFromInline
    func remember(_ keyPath: AnyKeyPath) {
        let address = UInt(bitPattern: Unmanaged.passRetained(keyPath).toOpaque())
        Self.release(slot.exchange(address, ordering: .acquiringAndReleasing))
    }

    private static func release(_ address: UInt) {
        guard let pointer = UnsafeRawPointer(bitPattern: address) else { return }
        Unmanaged<AnyKeyPath>.fromOpaque(pointer).release()
    }
}
