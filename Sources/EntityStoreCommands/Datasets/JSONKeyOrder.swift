import EntityStore

/// The order in which records' keys first appear in JSON text, per table, so that an
/// import stores fields in the order of its input (JSON objects themselves carry no
/// order once parsed). Only the first ``recordLimit`` records of each table are read for
/// keys; the text is only scanned past the rest.
enum JSONKeyOrder {
    static let recordLimit = 1_000

    /// Where the records sit in the text.
    enum Layout {
        /// `{"table": [record, ...], ...}`.
        case tablesObject
        /// `[record, ...]` for one table.
        case array
        /// One record per line, for one table.
        case lines
    }

    /// The keys of the records in first-seen order, by table (`""` for the one table of
    /// an array or lines file). Valid JSON is assumed (the file was parsed already).
    static func keys(in bytes: UnsafeBufferPointer<UInt8>, layout: Layout) -> [String: [String]] {
        let recordDepth = switch layout {
        case .tablesObject: 3
        case .array: 2
        case .lines: 1
        }
        var result: [String: [String]] = [:]
        var seen: [String: Set<String>] = [:]
        var records: [String: Int] = [:]
        var stack: [UInt8] = []  // '{' or '['
        var table = ""
        var expectingKey = false
        var index = 0
        let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\")
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "{"):
                stack.append(byte)
                expectingKey = true
                if stack.count == recordDepth { records[table, default: 0] += 1 }
            case UInt8(ascii: "["):
                stack.append(byte)
                expectingKey = false
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                _ = stack.popLast()
                expectingKey = false
            case UInt8(ascii: ","):
                expectingKey = stack.last == UInt8(ascii: "{")
            case quote:
                // A string: find its end, skipping escapes.
                let start = index
                index += 1
                while index < bytes.count, bytes[index] != quote {
                    index += bytes[index] == backslash ? 2 : 1
                }
                guard expectingKey else { break }
                expectingKey = false
                let depth = stack.count
                guard depth == 1 && layout == .tablesObject || depth == recordDepth && (records[table] ?? 0) <= recordLimit else { break }
                let raw = UnsafeBufferPointer(rebasing: bytes[start...min(index, bytes.count - 1)])
                guard case .string(let key)? = try? JSONValue(parsing: raw) else { break }
                if depth == 1 && layout == .tablesObject {
                    table = key
                } else if seen[table, default: []].insert(key).inserted {
                    result[table, default: []].append(key)
                }
            default:
                break
            }
            index += 1
        }
        return result
    }
}
