/// Finds `==` for a type whose equatability is not known statically, once.
///
/// The dynamic cast runs when the comparator is built (at store or scope creation); the
/// returned closure calls `==` directly, so a commit pays no cast.
func equalityComparator<T: Sendable>(for type: T.Type) -> (@Sendable (T, T) -> Bool)? {
    (EqualityWitness<T>.self as? any EquatableWitness<T>.Type)?.comparator
}

protocol EquatableWitness<Value> {
    associatedtype Value: Sendable
    static var comparator: @Sendable (Value, Value) -> Bool { get }
}

enum EqualityWitness<Value: Sendable> {}

extension EqualityWitness: EquatableWitness where Value: Equatable {
    static var comparator: @Sendable (Value, Value) -> Bool { { $0 == $1 } }
}
