extension Query {
    /// The field `keyPath` of each result, in the query's order and page. When the query's
    /// source is already in its order (an index lookup, an ordered index, or no sort) the
    /// values stream from it and no entity is kept; otherwise the matches are sorted first.
    /// - Complexity: the query's cost (as ``results``); O(1) per result to read the field.
    @inlinable
    public func values<Value>(_ keyPath: any KeyPath<E, Value> & Sendable) -> [Value] {
        var values: [Value] = []
        forEachResult { entity in
            values.append(entity[keyPath: keyPath])
            return true
        }
        return values
    }

    /// Two fields of each result, in the query's order and page, streamed as
    /// ``values(_:)`` streams one.
    /// - Complexity: the query's cost (as ``results``); O(1) per result to read the fields.
    @inlinable
    public func values<First, Second>(
        _ first: any KeyPath<E, First> & Sendable, _ second: any KeyPath<E, Second> & Sendable
    ) -> [(First, Second)] {
        var values: [(First, Second)] = []
        forEachResult { entity in
            values.append((entity[keyPath: first], entity[keyPath: second]))
            return true
        }
        return values
    }
}
