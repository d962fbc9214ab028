import HashTreeCollections
/// A declared relation, as tools and snapshots see it: `table.field` references the ID of
/// a row of `targetTable`, with a delete rule.
public struct RelationSpec: Sendable, Hashable, Codable {
    /// The referencing table.
    public let table: String
    /// The referencing field.
    public let field: String
    /// The referenced table.
    public let targetTable: String
    /// What a delete of the referenced row does to the referencing rows.
    public let deleteRule: DeleteRule

    /// A relation description.
    public init(table: String, field: String, targetTable: String, deleteRule: DeleteRule) {
        self.table = table
        self.field = field
        self.targetTable = targetTable
        self.deleteRule = deleteRule
    }
}
