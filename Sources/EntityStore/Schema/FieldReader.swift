/// A function reading the field `keyPath` names, as fast as the field allows.
///
/// Index maintenance reads a key from every entity it writes or loads. Applying a key
/// path goes through the runtime (hundreds of instructions, and a copy of the entity to
/// have it in memory); when the key path names a stored property of a struct, whose
/// offset `MemoryLayout` reports, the reader instead loads the value at that offset of
/// the borrowed entity. Other key paths (computed properties, class roots) keep the
/// key-path subscript.
/// - Complexity: O(1).
@inlinable
func fieldReader<Root, Value>(_ keyPath: any KeyPath<Root, Value> & Sendable) -> @Sendable (Root) -> Value {
    guard MemoryLayout<Root>.offset(of: keyPath as PartialKeyPath<Root>) != nil else {
        return { $0[keyPath: keyPath] }
    }
    let readInPlace = fieldReaderInPlace(keyPath)
    return { root in withUnsafePointer(to: root) { readInPlace($0) } }
}

/// A function reading the field `keyPath` names from a value in place, as
/// ``fieldReader(_:)`` does; bulk loads use it to read keys without copying the entity.
/// - Complexity: O(1).
@inlinable
func fieldReaderInPlace<Root, Value>(_ keyPath: any KeyPath<Root, Value> & Sendable) -> @Sendable (UnsafePointer<Root>) -> Value {
    guard let offset = MemoryLayout<Root>.offset(of: keyPath as PartialKeyPath<Root>) else {
        return { $0.pointee[keyPath: keyPath] }
    }
    return { pointer in
        // `offset` is where the stored property of type `Value` lives inside `Root`.
        UnsafeRawPointer(pointer).advanced(by: offset).assumingMemoryBound(to: Value.self).pointee
    }
}
