/// A table declaration that exposes its entity type, so code holding an `any AnyTable`
/// (persistence adapters, tools) can open it and work with the typed `Table`.
public protocol TypedTable: AnyTable {
    /// The entity type of the table.
    associatedtype Element: Entity
    /// The typed table declaration.
    var typed: Table<Element> { get }
}

extension Table: TypedTable {
    /// This table.
    public var typed: Table<E> { self }
}
