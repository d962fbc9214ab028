import HashTreeCollections
/// The declaration of one secondary index of a table of `E`.
public struct IndexSpec<E: Entity>: Sendable {
    /// The index's name, unique within its table (by default the field path it indexes).
    public let name: String
    /// Unique, grouped or ordered.
    public let kind: IndexKind
    /// The field path the index reads, e.g. `"authorID"`; snapshots record it.
    public let field: String
    /// Whether the store created the index itself (the reverse map of a relation).
    public let isImplicit: Bool
    let keyPath: KeyPathKey?
    let makeStorage: @Sendable () -> any EntityIndex<E>
}
