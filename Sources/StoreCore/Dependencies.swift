/// A key into ``Dependencies``: a type naming one dependency and its default.
public protocol DependencyKey {
    /// The dependency's type.
    associatedtype Value: Sendable
    /// The value used when no override is set.
    static var defaultValue: Value { get }
}

/// A value-typed bag of dependencies (clients, clocks, identifiers) handed to actions and
/// tasks; overridable per scope and in tests without touching the state.
public struct Dependencies: Sendable {
    private var values: [ObjectIdentifier: any Sendable] = [:]

    /// An empty bag: every key reads its `defaultValue`.
    public init() {}

    /// The override for `key`, or its `defaultValue`.
    /// - Complexity: O(1) on average.
    public subscript<Key: DependencyKey>(key: Key.Type) -> Key.Value {
        get { (values[ObjectIdentifier(key)] as? Key.Value) ?? Key.defaultValue }
        set { values[ObjectIdentifier(key)] = newValue }
    }

    /// A copy with `update` applied.
    /// - Complexity: O(n) in the number of overrides (copy on write).
    public func with(_ update: (inout Dependencies) -> Void) -> Dependencies {
        var copy = self
        update(&copy)
        return copy
    }
}
