import HashTreeCollections
/// A record stored in an entity table, addressed by its `id`.
///
/// Conform a value type to `Entity` to keep it in an ``EntityStore``. Entities are plain
/// values: the store keeps them normalized (one copy per ID), and relations between
/// tables are expressed by storing the related entity's ID in a field.
///
/// ```swift
/// struct Book: Entity {
///     var id: Int
///     var title: String
///     var authorID: Author.ID
/// }
/// ```
public protocol Entity: Identifiable, Codable, Sendable, Equatable where ID: Codable & Sendable {
    /// The default name of this type's table; `Table<Self>()` uses it.
    ///
    /// Defaults to the type's name (`"Book"` for `Book`). Override it to give the table a
    /// stable name that survives a rename of the Swift type: snapshots store tables by name.
    static var tableName: String { get }
}

extension Entity {
    /// The type's name, e.g. `"Book"`.
    public static var tableName: String { String(describing: Self.self) }
}
