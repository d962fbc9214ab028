import EntityStore
import EntityStoreSQLite

extension FieldCondition {
    /// The condition as the SQLite layer's ``SQLPushdown`` reads it: the same field,
    /// operator and operands (the texts typed are only for messages).
    var pushdownCondition: SQLPushdown.Condition {
        let op: SQLPushdown.Condition.Operator = switch self.op {
        case .equal: .equal
        case .notEqual: .notEqual
        case .less: .less
        case .lessOrEqual: .lessOrEqual
        case .greater: .greater
        case .greaterOrEqual: .greaterOrEqual
        case .oneOf: .oneOf
        case .isNull: .isNull
        case .isNotNull: .isNotNull
        }
        return SQLPushdown.Condition(field: field, op: op, operands: operands)
    }
}

extension SQLPushdown {
    /// The filter for the `--where` conditions SQL can answer exactly, and whether that is
    /// all of them (see ``SQLPushdown/filter(_:)-([SQLPushdown.Condition])``).
    /// - Complexity: O(conditions + operands).
    func filter(_ conditions: [FieldCondition]) -> (filter: SnapshotTableReader.Filter, isExact: Bool) {
        filter(conditions.map(\.pushdownCondition))
    }
}
