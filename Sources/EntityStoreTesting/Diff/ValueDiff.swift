import EntityStore
import Foundation

/// One field whose value differs between two values of the same type.
public struct FieldDifference: Sendable, Equatable, CustomStringConvertible {
    /// The field's path inside the value: `"title"`, `"edition.pages"`, `"tags[2]"`,
    /// `"extra[\"k\"]"`; empty when the values differ as a whole.
    public let path: String
    /// The value on the left (before, or expected), as text.
    public let old: String
    /// The value on the right (after, or actual), as text.
    public let new: String

    /// `path: old → new`.
    public var description: String { path.isEmpty ? "\(old) → \(new)" : "\(path): \(old) → \(new)" }
}

/// Field-by-field differences of two values, read through `Mirror`, so any type works
/// without conformances. Used to name the field that differs in a failure message.
///
/// Structs, classes and tuples are compared by stored property; arrays of the same
/// length element by element; dictionaries key by key; enums of the same case by
/// payload. Anything else (numbers, strings, sets, arrays of different lengths) is
/// compared as a whole by its description.
public enum ValueDiff {
    /// The fields that differ between `old` and `new`, at most `limit` of them.
    /// - Complexity: O(size of the two values) in the worst case; nesting deeper than 8
    ///   levels is compared as a whole.
    public static func differences(_ old: Any, _ new: Any, limit: Int = 50) -> [FieldDifference] {
        var found: [FieldDifference] = []
        collect(old, new, path: "", depth: 0, into: &found, limit: limit)
        return found
    }

    /// The value as a failure message shows it: strings quoted, optionals unwrapped
    /// (`nil` for none), other values by their description.
    /// - Complexity: that of the value's description.
    public static func describe(_ value: Any) -> String {
        let unwrapped = unwrap(value)
        guard let some = unwrapped else { return "nil" }
        switch some {
        case let text as String: return String(reflecting: text)
        case let character as Character: return String(reflecting: character)
        case let substring as Substring: return String(reflecting: String(substring))
        case let date as Date: return describe(date)
        case let record as DynamicRecord: return record.jsonValue.serialized()
        case let json as JSONValue: return json.serialized()
        default: return String(describing: some)
        }
    }

    /// A date in ISO 8601, to the millisecond (UTC).
    static func describe(_ date: Date) -> String {
        guard date.timeIntervalSinceReferenceDate.isFinite else { return "\(date.timeIntervalSinceReferenceDate) s after 2001-01-01" }
        return date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    /// The value inside any number of optionals, or nil.
    static func unwrap(_ value: Any) -> Any? {
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .optional else { return value }
        guard let child = mirror.children.first else { return nil }
        return unwrap(child.value)
    }

    private static func join(_ path: String, _ label: String) -> String {
        path.isEmpty ? label : path + "." + label
    }

    private static func collect(_ old: Any, _ new: Any, path: String, depth: Int, into found: inout [FieldDifference], limit: Int) {
        guard found.count < limit else { return }
        let oldText = describe(old), newText = describe(new)
        let leaf = FieldDifference(path: path, old: oldText, new: newText)
        guard let left = unwrap(old), let right = unwrap(new) else {
            if oldText != newText { found.append(leaf) }
            return
        }
        guard depth < 8, type(of: left) == type(of: right) else {
            if oldText != newText { found.append(leaf) }
            return
        }
        if let leftDate = left as? Date, let rightDate = right as? Date {
            // A leaf, not its stored seconds; two instants that print alike also show their seconds.
            guard leftDate.timeIntervalSinceReferenceDate.bitPattern != rightDate.timeIntervalSinceReferenceDate.bitPattern else { return }
            if oldText == newText {
                found.append(FieldDifference(
                    path: path, old: "\(oldText) (\(leftDate.timeIntervalSince1970) s)", new: "\(newText) (\(rightDate.timeIntervalSince1970) s)"))
            } else {
                found.append(leaf)
            }
            return
        }
        if let leftRecord = left as? DynamicRecord, let rightRecord = right as? DynamicRecord {
            if leftRecord.id != rightRecord.id { found.append(FieldDifference(path: join(path, "id"), old: describe(leftRecord.id), new: describe(rightRecord.id))) }
            compareMembers(leftRecord.fields, rightRecord.fields, path: path, depth: depth, into: &found, limit: limit, asFields: true)
            return
        }
        if let leftObject = left as? [String: JSONValue], let rightObject = right as? [String: JSONValue] {
            compareMembers(leftObject, rightObject, path: path, depth: depth, into: &found, limit: limit, asFields: false)
            return
        }
        if let leftJSON = left as? JSONValue, let rightJSON = right as? JSONValue {
            switch (leftJSON, rightJSON) {
            case (.object(let l), .object(let r)):
                compareMembers(l, r, path: path, depth: depth, into: &found, limit: limit, asFields: false)
            case (.array(let l), .array(let r)) where l.count == r.count:
                for index in l.indices where l[index] != r[index] {
                    collect(l[index], r[index], path: path + "[\(index)]", depth: depth + 1, into: &found, limit: limit)
                }
            default:
                if leftJSON != rightJSON || oldText != newText { found.append(leaf) }
            }
            return
        }
        let leftMirror = Mirror(reflecting: left), rightMirror = Mirror(reflecting: right)
        switch leftMirror.displayStyle {
        case .struct?, .class?, .tuple?:
            let rightChildren = Array(rightMirror.children)
            let leftChildren = Array(leftMirror.children)
            guard leftChildren.count == rightChildren.count, !leftChildren.isEmpty else {
                if oldText != newText { found.append(leaf) }
                return
            }
            let before = found.count
            for (index, child) in leftChildren.enumerated() {
                let label = child.label ?? ".\(index)"
                collect(child.value, rightChildren[index].value, path: join(path, label), depth: depth + 1, into: &found, limit: limit)
            }
            if found.count == before, oldText != newText { found.append(leaf) }
        case .enum?:
            let leftCase = leftMirror.children.first, rightCase = rightMirror.children.first
            if let leftCase, let rightCase, leftCase.label == rightCase.label {
                let before = found.count
                collect(leftCase.value, rightCase.value, path: path, depth: depth + 1, into: &found, limit: limit)
                if found.count == before, oldText != newText { found.append(leaf) }
            } else if oldText != newText {
                found.append(leaf)
            }
        case .collection?:
            let l = Array(leftMirror.children), r = Array(rightMirror.children)
            guard l.count == r.count else {
                found.append(leaf)
                return
            }
            for index in l.indices {
                collect(l[index].value, r[index].value, path: path + "[\(index)]", depth: depth + 1, into: &found, limit: limit)
            }
        case .dictionary?:
            var leftMembers: [String: Any] = [:], rightMembers: [String: Any] = [:]
            for child in leftMirror.children { if let pair = pair(of: child.value) { leftMembers[pair.key] = pair.value } }
            for child in rightMirror.children { if let pair = pair(of: child.value) { rightMembers[pair.key] = pair.value } }
            for key in Set(leftMembers.keys).union(rightMembers.keys).sorted() {
                let memberPath = path + "[\(key)]"
                switch (leftMembers[key], rightMembers[key]) {
                case let (l?, r?): collect(l, r, path: memberPath, depth: depth + 1, into: &found, limit: limit)
                case let (l?, nil): found.append(FieldDifference(path: memberPath, old: describe(l), new: "absent"))
                case let (nil, r?): found.append(FieldDifference(path: memberPath, old: "absent", new: describe(r)))
                case (nil, nil): break
                }
            }
        default:
            if oldText != newText { found.append(leaf) }
        }
    }

    private static func compareMembers(
        _ left: [String: JSONValue], _ right: [String: JSONValue], path: String, depth: Int,
        into found: inout [FieldDifference], limit: Int, asFields: Bool
    ) {
        for key in Set(left.keys).union(right.keys).sorted() where left[key] != right[key] {
            let memberPath = asFields ? join(path, key) : path + "[\(String(reflecting: key))]"
            switch (left[key], right[key]) {
            case let (l?, r?): collect(l, r, path: memberPath, depth: depth + 1, into: &found, limit: limit)
            case let (l?, nil): found.append(FieldDifference(path: memberPath, old: describe(l), new: "absent"))
            case let (nil, r?): found.append(FieldDifference(path: memberPath, old: "absent", new: describe(r)))
            case (nil, nil): break
            }
        }
    }

    /// A dictionary element's key (as text) and value.
    private static func pair(of element: Any) -> (key: String, value: Any)? {
        let children = Array(Mirror(reflecting: element).children)
        guard children.count == 2 else { return nil }
        return (describe(children[0].value), children[1].value)
    }
}
