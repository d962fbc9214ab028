import HashTreeCollections
/// A hashable, sendable wrapper for a key path, used to find the index declared on it.
@usableFromInline
struct KeyPathKey: Hashable, Sendable {
    @usableFromInline
    let keyPath: any AnyKeyPath & Sendable

    @inlinable
    init(keyPath: any AnyKeyPath & Sendable) {
        self.keyPath = keyPath
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
