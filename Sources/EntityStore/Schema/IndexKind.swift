import HashTreeCollections
/// The kinds of secondary index a table can declare.
public enum IndexKind: String, Sendable, CaseIterable, Codable {
    /// One key maps to at most one entity; a second entity with the same key is refused.
    case unique
    /// One key maps to many entities, kept in insertion order.
    case grouped
    /// Entities sorted by key: range queries, top-k and sorted iteration.
    case ordered
}
