extension JSONValue {
    /// The deepest nesting of arrays and objects a parse accepts, whatever `maxDepth` asks
    /// for. Parsing, comparing, hashing, serializing and releasing a value all recurse once
    /// per level; the cap keeps that within the small stacks of secondary threads.
    public static let maximumNestingLimit = 1_024

    /// Parses one JSON document (RFC 8259) from UTF-8 bytes.
    ///
    /// - Integer literals (no fraction or exponent) become `.integer` when they fit in
    ///   `Int64`, otherwise `.double`; `-0` is the integer 0, `-0.0` the double -0.0.
    /// - Every other number becomes `.double`; one beyond the range of `Double` is an error.
    /// - In an object, a repeated key's last value wins.
    /// - A leading UTF-8 byte order mark is skipped; `NaN`, `Infinity`, comments, trailing
    ///   commas, leading zeros, raw control characters in strings, lone surrogate escapes and
    ///   malformed UTF-8 are errors.
    ///
    /// - Parameters:
    ///   - bytes: The JSON text, as UTF-8.
    ///   - maxDepth: How deeply arrays and objects may nest (capped at
    ///     `maximumNestingLimit`); deeper input is an error, never a stack overflow.
    /// - Throws: `JSONParseError` naming the line, column and what was expected.
    /// - Complexity: O(n) in the input's length.
    public init(parsing bytes: some Collection<UInt8>, maxDepth: Int = 512) throws(JSONParseError) {
        let depth = Self.effectiveDepth(maxDepth)
        let result = bytes.withContiguousStorageIfAvailable { buffer in
            JSONParser.parse(buffer, range: 0..<buffer.count, maxDepth: depth)
        } ?? Array(bytes).withUnsafeBufferPointer { buffer in
            JSONParser.parse(buffer, range: 0..<buffer.count, maxDepth: depth)
        }
        self = try result.get()
    }

    /// Parses one JSON document (RFC 8259) from text; see `init(parsing:maxDepth:)` for bytes.
    ///
    /// - Throws: `JSONParseError` naming the line, column and what was expected.
    /// - Complexity: O(n) in the text's UTF-8 length.
    public init(parsing text: String, maxDepth: Int = 512) throws(JSONParseError) {
        var text = text
        let depth = Self.effectiveDepth(maxDepth)
        let result = text.withUTF8 { buffer in
            JSONParser.parse(buffer, range: 0..<buffer.count, maxDepth: depth)
        }
        self = try result.get()
    }

    /// Parses newline-delimited JSON (one document per line, as in NDJSON or JSON Lines),
    /// calling `body` with each value and its 1-based line number. Blank lines (only
    /// whitespace) are skipped; a `\r` before the `\n` is allowed.
    ///
    /// - Throws: A `JSONParseError` whose `line` is the line's number in the whole input
    ///   (and whose `byteOffset` counts from the start of the input), or whatever `body`
    ///   throws; parsing stops at the first error.
    /// - Complexity: O(n) in the input's length, plus the cost of `body`.
    public static func parseLines(
        _ bytes: some Collection<UInt8>,
        maxDepth: Int = 512,
        body: (_ lineNumber: Int, _ value: JSONValue) throws -> Void
    ) throws {
        let depth = effectiveDepth(maxDepth)
        if let result = try bytes.withContiguousStorageIfAvailable({ buffer in
            try parseLines(buffer, maxDepth: depth, body: body)
        }) {
            return result
        }
        try Array(bytes).withUnsafeBufferPointer { buffer in
            try parseLines(buffer, maxDepth: depth, body: body)
        }
    }

    private static func parseLines(
        _ buffer: UnsafeBufferPointer<UInt8>,
        maxDepth: Int,
        body: (_ lineNumber: Int, _ value: JSONValue) throws -> Void
    ) throws {
        var lineNumber = 1
        var lineStart = 0
        while lineStart < buffer.count {
            var lineEnd = lineStart
            while lineEnd < buffer.count, buffer[lineEnd] != ASCII.newline {
                lineEnd += 1
            }
            let range = lineStart..<lineEnd
            let isBlank = buffer[range].allSatisfy {
                $0 == ASCII.space || $0 == ASCII.tab || $0 == ASCII.carriageReturn
            }
            if !isBlank {
                let value = try JSONParser.parse(buffer, range: range, firstLine: lineNumber, maxDepth: maxDepth).get()
                try body(lineNumber, value)
            }
            lineNumber += 1
            lineStart = lineEnd + 1
        }
    }

    private static func effectiveDepth(_ requested: Int) -> Int {
        Swift.max(0, Swift.min(requested, maximumNestingLimit))
    }
}
