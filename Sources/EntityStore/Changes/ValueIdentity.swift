/// Whether two values of a type are the same value for change detection: `==`, except
/// that floating-point fields are compared as indexes order them, by bit pattern, so that
/// `-0.0` differs from `+0.0` and a NaN is the same as the same NaN.
///
/// `==` says `-0.0 == +0.0`, yet a reader can tell them apart (their sign, `1 / x`, an
/// ordered index or a group-by's extremes): a write from one to the other is a change,
/// and a change set that left it out would leave every reader behind. And `==` says a
/// NaN is unequal to itself, yet a row rewritten with the NaN it holds did not change.
///
/// Cost: one `==` for most pairs. Only a pair `==` calls equal, or one whose second value
/// holds a NaN (it is unequal to itself), is walked field by field (`Mirror`), which is
/// slower, but such a write changed nothing or holds a NaN. One case stays with `==`: an
/// array field holding a NaN (an array is `==` to itself by identity, so the NaN goes
/// unseen), so rewriting it with an equal copy counts as a change.
public enum ValueIdentity {
    /// Whether `a` and `b` are the same value (see ``ValueIdentity``).
    /// - Complexity: O(1) `==`s for most pairs; O(fields) reflection for equal ones.
    @inlinable
    public static func same<T: Equatable>(_ a: T, _ b: T) -> Bool {
        if a == b { return !hidesFloatingPointDifference(a, b) }
        // Unequal: really, unless the difference is a NaN in the same place of both (a
        // value holding a NaN is unequal to itself).
        if b == b { return false }
        return Walk.same(a, b, comparingEveryField: true)
    }

    /// Whether two arrays hold the same values, in order. Element by element: an array is
    /// `==` to itself by identity whatever it holds, so the NaN test of ``same(_:_:)``
    /// cannot see into one.
    /// - Complexity: O(n) ``same(_:_:)``s.
    @inlinable
    public static func same<T: Equatable>(_ a: [T], _ b: [T]) -> Bool {
        guard a.count == b.count else { return false }
        for index in a.indices where !same(a[index], b[index]) { return false }
        return true
    }

    /// Whether two optional values are the same: both nil, or the same value.
    @inlinable
    public static func same<T: Equatable>(_ a: T?, _ b: T?) -> Bool {
        switch (a, b) {
        case (nil, nil): return true
        case let (a?, b?): return same(a, b)
        default: return false
        }
    }

    /// Whether `a` and `b`, which `==` calls equal, differ in a floating-point field
    /// (a zero of the other sign).
    @usableFromInline
    static func hidesFloatingPointDifference<T>(_ a: T, _ b: T) -> Bool {
        !Walk.same(a, b, comparingEveryField: false)
    }

    /// The field-by-field comparison.
    @usableFromInline
    enum Walk {
        /// Whether `a` and `b` hold the same floating-point values by bit pattern (NaNs
        /// alike), walking their fields; with `comparingEveryField`, other leaves are
        /// compared with their own `==` too (otherwise they are taken as equal, as when
        /// the whole values were already found `==`).
        @usableFromInline
        static func same(_ a: Any, _ b: Any, comparingEveryField: Bool) -> Bool {
            if let x = a as? Double, let y = b as? Double { return x.bitPattern == y.bitPattern || (x.isNaN && y.isNaN) }
            if let x = a as? Float, let y = b as? Float { return x.bitPattern == y.bitPattern || (x.isNaN && y.isNaN) }
            // Common leaves that hold no floating point: their own `==`, when asked.
            if a is String || a is Int || a is Bool || a is Int64 || a is UInt64 || a is Int32 || a is UInt32 || a is UInt8 {
                return !comparingEveryField || equalLeaves(a, b)
            }
            let left = Mirror(reflecting: a), right = Mirror(reflecting: b)
            switch left.displayStyle {
            case .optional?:
                // None and none, some and some (compared), or one of each.
                guard left.children.count == right.children.count else { return false }
                guard let l = left.children.first, let r = right.children.first else { return true }
                return same(l.value, r.value, comparingEveryField: comparingEveryField)
            case .dictionary?, .set?:
                // Their order is not their identity: left to `==` (a set or dictionary of
                // floating-point keys cannot hold both zeros apart anyway).
                return !comparingEveryField || equalLeaves(a, b)
            default:
                break
            }
            if left.children.isEmpty && right.children.isEmpty {
                // A leaf (a payload-free enum case, a number of another width ...).
                return !comparingEveryField || equalLeaves(a, b)
            }
            guard left.children.count == right.children.count else { return false }
            for (l, r) in zip(left.children, right.children) {
                guard l.label == r.label, same(l.value, r.value, comparingEveryField: comparingEveryField) else { return false }
            }
            var leftSuper = left.superclassMirror, rightSuper = right.superclassMirror
            while let l = leftSuper, let r = rightSuper {
                guard l.children.count == r.children.count else { return false }
                for (x, y) in zip(l.children, r.children) {
                    guard x.label == y.label, same(x.value, y.value, comparingEveryField: comparingEveryField) else { return false }
                }
                leftSuper = l.superclassMirror
                rightSuper = r.superclassMirror
            }
            return true
        }

        /// `==` of two leaves of the same type, opened from `Any`; false when the type is
        /// not `Equatable` (then nothing says they are the same).
        @usableFromInline
        static func equalLeaves(_ a: Any, _ b: Any) -> Bool {
            guard let left = a as? any Equatable else { return false }
            return left.isEqual(to: b)
        }
    }
}

extension Equatable {
    /// `self == other` when `other` is a `Self`.
    @usableFromInline
    func isEqual(to other: Any) -> Bool {
        guard let other = other as? Self else { return false }
        return self == other
    }
}
