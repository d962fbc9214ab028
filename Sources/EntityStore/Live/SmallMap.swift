/// A map for the handful of entries one commit usually touches: an array searched
/// linearly, which for a few entries costs less than hashing a key (and allocates once,
/// where a `Dictionary` also allocates its table), and a hash index built once it holds
/// more than eight, so a large commit stays O(1) per lookup.
@usableFromInline
struct SmallMap<Key: Hashable, Value> {
    @usableFromInline var keys: [Key] = []
    @usableFromInline var values: [Value] = []
    @usableFromInline var index: [Key: Int]?

    @inlinable
    init() {}

    @inlinable
    var count: Int { keys.count }

    @inlinable
    var isEmpty: Bool { keys.isEmpty }

    /// The position of `key` among the entries. O(1) expected once indexed, O(count) before.
    @inlinable
    func position(of key: Key) -> Int? {
        if let index { return index[key] }
        return keys.firstIndex(of: key)
    }

    /// The value of `key`, if any.
    @inlinable
    subscript(key: Key) -> Value? {
        position(of: key).map { values[$0] }
    }

    /// Sets the value of `key`, adding it if it is new.
    @inlinable
    mutating func set(_ value: Value, for key: Key) {
        if let position = position(of: key) {
            values[position] = value
            return
        }
        keys.append(key)
        values.append(value)
        if index != nil {
            index?[key] = keys.count - 1
        } else if keys.count > 8 {
            index = Dictionary(uniqueKeysWithValues: zip(keys, keys.indices))
        }
    }
}
