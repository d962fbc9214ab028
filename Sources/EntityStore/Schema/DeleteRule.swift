import HashTreeCollections
/// What happens to the rows that reference an entity when that entity is removed.
public enum DeleteRule: String, Sendable, CaseIterable, Codable {
    /// Remove the referencing rows too (transitively, inside the same transaction).
    case cascade
    /// Set the referencing field to `nil`; only for optional reference fields.
    case nullify
    /// Refuse the delete: the transaction throws ``EntityStoreError/restrictViolation(table:id:referencingTable:field:referencingID:)``.
    case restrict
    /// Do nothing; the reference may dangle unless integrity checking is enabled.
    case none
}
