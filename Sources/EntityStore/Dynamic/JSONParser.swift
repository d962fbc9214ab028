/// A byte-level recursive-descent parser for RFC 8259 JSON over UTF-8.
///
/// It works on a buffer of bytes, validates UTF-8 as it scans strings and creates a
/// `String` only once per string token. Positions are tracked as byte offsets only; lines
/// and columns are computed when an error is reported.
struct JSONParser {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var index: Int
    private let end: Int
    /// Where line `firstLine`, column 1 begins, for error positions.
    private let origin: Int
    private let firstLine: Int
    private let maxDepth: Int
    private var depth = 0
    /// Reused for strings that contain escapes.
    private var scratch: [UInt8] = []

    /// Parses one JSON document that spans `range` of `bytes`; lines in errors count from
    /// `firstLine`, byte offsets from the start of `bytes`.
    static func parse(
        _ bytes: UnsafeBufferPointer<UInt8>,
        range: Range<Int>,
        firstLine: Int = 1,
        maxDepth: Int
    ) -> Result<JSONValue, JSONParseError> {
        var start = range.lowerBound
        // A UTF-8 byte order mark is tolerated at the start of a document.
        if range.count >= 3, bytes[start] == 0xEF, bytes[start + 1] == 0xBB, bytes[start + 2] == 0xBF {
            start += 3
        }
        var parser = JSONParser(
            bytes: bytes,
            index: start,
            end: range.upperBound,
            origin: start,
            firstLine: firstLine,
            maxDepth: maxDepth
        )
        do {
            return .success(try parser.parseDocument())
        } catch {
            return .failure(error)
        }
    }

    private init(bytes: UnsafeBufferPointer<UInt8>, index: Int, end: Int, origin: Int, firstLine: Int, maxDepth: Int) {
        self.bytes = bytes
        self.index = index
        self.end = end
        self.origin = origin
        self.firstLine = firstLine
        self.maxDepth = maxDepth
    }

    private mutating func parseDocument() throws(JSONParseError) -> JSONValue {
        skipWhitespace()
        let value = try parseValue()
        skipWhitespace()
        if index < end {
            throw error(.trailingCharacters(found: describe(bytes[index])), at: index)
        }
        return value
    }

    private mutating func parseValue() throws(JSONParseError) -> JSONValue {
        guard index < end else {
            throw error(.unexpectedEndOfInput(expected: "a JSON value"), at: index)
        }
        switch bytes[index] {
        case ASCII.openBrace: return try parseObject()
        case ASCII.openBracket: return try parseArray()
        case ASCII.quote: return .string(try parseString())
        case ASCII.lowercaseT:
            try expectLiteral("true")
            return .bool(true)
        case ASCII.lowercaseF:
            try expectLiteral("false")
            return .bool(false)
        case ASCII.lowercaseN where nonFiniteLiteral() == nil:
            try expectLiteral("null")
            return .null
        case ASCII.minus where nonFiniteLiteral() == nil, ASCII.zero...ASCII.nine:
            return try parseNumber()
        default:
            // NaN and Infinity are common in data written by other tools, and not JSON.
            if let literal = nonFiniteLiteral() { throw error(.nonFiniteNumber(literal), at: index) }
            throw error(.unexpectedCharacter(found: describe(bytes[index]), expected: "a JSON value"), at: index)
        }
    }

    /// The spelling of NaN or an infinity (`NaN`, `-Infinity`, `inf`, any case) that starts
    /// at the current position, or nil.
    private func nonFiniteLiteral() -> String? {
        for literal in ["-infinity", "infinity", "-inf", "inf", "nan"] {
            let utf8 = Array(literal.utf8)
            guard end - index >= utf8.count else { continue }
            let matches = (0..<utf8.count).allSatisfy { offset in
                let byte = bytes[index + offset]
                return (byte >= 0x41 && byte <= 0x5A ? byte + 0x20 : byte) == utf8[offset]
            }
            if matches {
                return String(decoding: UnsafeBufferPointer(rebasing: bytes[index..<(index + utf8.count)]), as: UTF8.self)
            }
        }
        return nil
    }

    // MARK: Containers

    private mutating func enterContainer() throws(JSONParseError) {
        depth += 1
        if depth > maxDepth {
            throw error(.nestingTooDeep(limit: maxDepth), at: index)
        }
        index += 1
    }

    private mutating func parseArray() throws(JSONParseError) -> JSONValue {
        try enterContainer()
        defer { depth -= 1 }
        var elements: [JSONValue] = []
        skipWhitespace()
        if index < end, bytes[index] == ASCII.closeBracket {
            index += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue())
            skipWhitespace()
            guard index < end else {
                throw error(.unexpectedEndOfInput(expected: "',' or ']'"), at: index)
            }
            switch bytes[index] {
            case ASCII.comma:
                index += 1
            case ASCII.closeBracket:
                index += 1
                return .array(elements)
            default:
                throw error(.unexpectedCharacter(found: describe(bytes[index]), expected: "',' or ']'"), at: index)
            }
        }
    }

    private mutating func parseObject() throws(JSONParseError) -> JSONValue {
        try enterContainer()
        defer { depth -= 1 }
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if index < end, bytes[index] == ASCII.closeBrace {
            index += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard index < end else {
                throw error(.unexpectedEndOfInput(expected: "a string key"), at: index)
            }
            guard bytes[index] == ASCII.quote else {
                throw error(.unexpectedCharacter(found: describe(bytes[index]), expected: "a string key"), at: index)
            }
            let key = try parseString()
            skipWhitespace()
            guard index < end else {
                throw error(.unexpectedEndOfInput(expected: "':'"), at: index)
            }
            guard bytes[index] == ASCII.colon else {
                throw error(.unexpectedCharacter(found: describe(bytes[index]), expected: "':'"), at: index)
            }
            index += 1
            skipWhitespace()
            // A repeated key replaces the earlier value: the last one wins.
            members[key] = try parseValue()
            skipWhitespace()
            guard index < end else {
                throw error(.unexpectedEndOfInput(expected: "',' or '}'"), at: index)
            }
            switch bytes[index] {
            case ASCII.comma:
                index += 1
            case ASCII.closeBrace:
                index += 1
                return .object(members)
            default:
                throw error(.unexpectedCharacter(found: describe(bytes[index]), expected: "',' or '}'"), at: index)
            }
        }
    }

    // MARK: Scalars

    private mutating func expectLiteral(_ literal: StaticString) throws(JSONParseError) {
        let expected = literal.utf8Start
        for offset in 0..<literal.utf8CodeUnitCount {
            guard index < end else {
                throw error(.unexpectedEndOfInput(expected: "'\(literal)'"), at: index)
            }
            guard bytes[index] == expected[offset] else {
                throw error(.unexpectedCharacter(found: describe(bytes[index]), expected: "'\(literal)'"), at: index)
            }
            index += 1
        }
    }

    private mutating func parseNumber() throws(JSONParseError) -> JSONValue {
        let start = index
        let negative = bytes[index] == ASCII.minus
        if negative { index += 1 }
        try expectDigit("a digit")
        var magnitude: UInt64 = 0
        var overflow = false
        if bytes[index] == ASCII.zero {
            index += 1
            if index < end, isDigit(bytes[index]) {
                throw error(.leadingZero, at: start)
            }
        } else {
            while index < end, isDigit(bytes[index]) {
                let (product, productOverflow) = magnitude.multipliedReportingOverflow(by: 10)
                let (sum, sumOverflow) = product.addingReportingOverflow(UInt64(bytes[index] &- ASCII.zero))
                overflow = overflow || productOverflow || sumOverflow
                magnitude = sum
                index += 1
            }
        }
        var isInteger = true
        if index < end, bytes[index] == ASCII.period {
            isInteger = false
            index += 1
            try expectDigit("a digit after the decimal point")
            skipDigits()
        }
        if index < end, bytes[index] == ASCII.lowercaseE || bytes[index] == ASCII.uppercaseE {
            isInteger = false
            index += 1
            if index < end, bytes[index] == ASCII.plus || bytes[index] == ASCII.minus {
                index += 1
            }
            try expectDigit("a digit in the exponent")
            skipDigits()
        }
        // Integer literals that fit become `.integer`; `-0` is the integer 0.
        if isInteger, !overflow {
            if !negative, magnitude <= UInt64(Int64.max) {
                return .integer(Int64(magnitude))
            }
            if negative, magnitude <= UInt64(Int64.max) + 1 {
                return .integer(Int64(truncatingIfNeeded: 0 &- magnitude))
            }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        // A double would silently lose digits of an integer this large.
        if isInteger { throw error(.integerOutOfRange(text), at: start) }
        guard let value = Double(text), value.isFinite else {
            throw error(.numberOutOfRange(text), at: start)
        }
        return .double(value)
    }

    private mutating func expectDigit(_ expected: String) throws(JSONParseError) {
        guard index < end else {
            throw error(.unexpectedEndOfInput(expected: expected), at: index)
        }
        guard isDigit(bytes[index]) else {
            throw error(.unexpectedCharacter(found: describe(bytes[index]), expected: expected), at: index)
        }
    }

    private mutating func skipDigits() {
        while index < end, isDigit(bytes[index]) {
            index += 1
        }
    }

    private func isDigit(_ byte: UInt8) -> Bool {
        byte >= ASCII.zero && byte <= ASCII.nine
    }

    private mutating func skipWhitespace() {
        while index < end {
            switch bytes[index] {
            case ASCII.space, ASCII.tab, ASCII.newline, ASCII.carriageReturn: index += 1
            default: return
            }
        }
    }

    // MARK: Errors

    /// An error at byte `offset`, with its line and column.
    func error(_ reason: JSONParseError.Reason, at offset: Int) -> JSONParseError {
        var line = firstLine
        var lineStart = origin
        for position in origin..<Swift.min(offset, end) where bytes[position] == ASCII.newline {
            line += 1
            lineStart = position + 1
        }
        var column = 1
        for position in lineStart..<Swift.min(offset, end) where bytes[position] & 0xC0 != 0x80 {
            column += 1
        }
        return JSONParseError(reason: reason, line: line, column: column, byteOffset: offset)
    }

    /// A printable description of the byte at a point of error.
    func describe(_ byte: UInt8) -> String {
        if byte >= 0x21 && byte < 0x7F {
            return "'\(Character(Unicode.Scalar(byte)))'"
        }
        return byte < 0x80 ? "character \(JSONParseError.hex(byte))" : "byte 0x\(String(byte, radix: 16, uppercase: true))"
    }
}

extension JSONParser {
    /// Parses the string token at `index` (an opening quote) and moves past it.
    mutating func parseString() throws(JSONParseError) -> String {
        index += 1
        let contentStart = index
        // Fast path: no escapes, so the token's bytes are the string's UTF-8.
        while index < end {
            let byte = bytes[index]
            if byte == ASCII.quote {
                let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[contentStart..<index]), as: UTF8.self)
                index += 1
                return text
            }
            if byte == ASCII.backslash {
                return try parseEscapedString(from: contentStart)
            }
            if byte < 0x20 {
                throw error(.controlCharacterInString(byte), at: index)
            }
            if byte < 0x80 {
                index += 1
            } else {
                try skipMultibyteScalar()
            }
        }
        throw error(.unexpectedEndOfInput(expected: "'\"' to close the string"), at: index)
    }

    private mutating func parseEscapedString(from contentStart: Int) throws(JSONParseError) -> String {
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[contentStart..<index]))
        while index < end {
            let byte = bytes[index]
            if byte == ASCII.quote {
                index += 1
                return String(decoding: scratch, as: UTF8.self)
            }
            if byte == ASCII.backslash {
                try parseEscape()
            } else if byte < 0x20 {
                throw error(.controlCharacterInString(byte), at: index)
            } else if byte < 0x80 {
                scratch.append(byte)
                index += 1
            } else {
                let start = index
                try skipMultibyteScalar()
                scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<index]))
            }
        }
        throw error(.unexpectedEndOfInput(expected: "'\"' to close the string"), at: index)
    }

    /// Decodes the escape at `index` (a backslash) into `scratch` and moves past it.
    private mutating func parseEscape() throws(JSONParseError) {
        let escapeStart = index
        index += 1
        guard index < end else {
            throw error(.unexpectedEndOfInput(expected: "an escape character"), at: index)
        }
        let decoded: UInt8
        switch bytes[index] {
        case ASCII.quote: decoded = ASCII.quote
        case ASCII.backslash: decoded = ASCII.backslash
        case ASCII.slash: decoded = ASCII.slash
        case ASCII.lowercaseB: decoded = 0x08
        case ASCII.lowercaseF: decoded = 0x0C
        case ASCII.lowercaseN: decoded = ASCII.newline
        case ASCII.lowercaseR: decoded = ASCII.carriageReturn
        case ASCII.lowercaseT: decoded = ASCII.tab
        case ASCII.lowercaseU:
            index += 1
            try parseUnicodeEscape(escapeStart: escapeStart)
            return
        default:
            throw error(.invalidEscape(found: describeEscape(bytes[index])), at: escapeStart)
        }
        scratch.append(decoded)
        index += 1
    }

    /// Decodes the hex digits of a `\u` escape, pairing surrogates, into `scratch`.
    private mutating func parseUnicodeEscape(escapeStart: Int) throws(JSONParseError) {
        let unit = try readHexQuad()
        var scalarValue = UInt32(unit)
        if (0xD800...0xDBFF).contains(unit) {
            guard index + 1 < end, bytes[index] == ASCII.backslash, bytes[index + 1] == ASCII.lowercaseU else {
                throw error(.loneSurrogate(unit), at: escapeStart)
            }
            index += 2
            let low = try readHexQuad()
            guard (0xDC00...0xDFFF).contains(low) else {
                throw error(.loneSurrogate(unit), at: escapeStart)
            }
            scalarValue = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
        } else if (0xDC00...0xDFFF).contains(unit) {
            throw error(.loneSurrogate(unit), at: escapeStart)
        }
        appendUTF8(scalarValue)
    }

    /// Appends the UTF-8 encoding of a scalar value already known to be valid.
    private mutating func appendUTF8(_ value: UInt32) {
        switch value {
        case ..<0x80:
            scratch.append(UInt8(value))
        case ..<0x800:
            scratch.append(UInt8(0xC0 | value >> 6))
            scratch.append(UInt8(0x80 | value & 0x3F))
        case ..<0x10000:
            scratch.append(UInt8(0xE0 | value >> 12))
            scratch.append(UInt8(0x80 | value >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | value & 0x3F))
        default:
            scratch.append(UInt8(0xF0 | value >> 18))
            scratch.append(UInt8(0x80 | value >> 12 & 0x3F))
            scratch.append(UInt8(0x80 | value >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | value & 0x3F))
        }
    }

    private mutating func readHexQuad() throws(JSONParseError) -> UInt16 {
        var value: UInt16 = 0
        for _ in 0..<4 {
            guard index < end else {
                throw error(.unexpectedEndOfInput(expected: "a hexadecimal digit"), at: index)
            }
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case ASCII.zero...ASCII.nine: digit = byte - ASCII.zero
            case ASCII.lowercaseA...ASCII.lowercaseF: digit = byte - ASCII.lowercaseA + 10
            case ASCII.uppercaseA...ASCII.uppercaseF: digit = byte - ASCII.uppercaseA + 10
            default:
                throw error(.unexpectedCharacter(found: describe(byte), expected: "a hexadecimal digit"), at: index)
            }
            value = value << 4 | UInt16(digit)
            index += 1
        }
        return value
    }

    /// Validates the multi-byte UTF-8 sequence at `index` and moves past it: no overlong
    /// forms, no encoded surrogates, nothing above U+10FFFF.
    private mutating func skipMultibyteScalar() throws(JSONParseError) {
        let lead = bytes[index]
        let continuationCount: Int
        let minimum: UInt32
        var scalar: UInt32
        switch lead {
        case 0xC2...0xDF: (continuationCount, minimum, scalar) = (1, 0x80, UInt32(lead & 0x1F))
        case 0xE0...0xEF: (continuationCount, minimum, scalar) = (2, 0x800, UInt32(lead & 0x0F))
        case 0xF0...0xF4: (continuationCount, minimum, scalar) = (3, 0x10000, UInt32(lead & 0x07))
        default: throw error(.invalidUTF8, at: index)
        }
        guard end - index > continuationCount else {
            throw error(.invalidUTF8, at: index)
        }
        for offset in 1...continuationCount {
            let byte = bytes[index + offset]
            guard byte & 0xC0 == 0x80 else {
                throw error(.invalidUTF8, at: index)
            }
            scalar = scalar << 6 | UInt32(byte & 0x3F)
        }
        guard scalar >= minimum, scalar <= 0x10FFFF, !(0xD800...0xDFFF).contains(scalar) else {
            throw error(.invalidUTF8, at: index)
        }
        index += continuationCount + 1
    }

    private func describeEscape(_ byte: UInt8) -> String {
        byte >= 0x21 && byte < 0x7F ? String(Character(Unicode.Scalar(byte))) : JSONParseError.hex(byte)
    }
}

/// The ASCII bytes the parser and writer look for.
enum ASCII {
    static let tab: UInt8 = 0x09
    static let newline: UInt8 = 0x0A
    static let carriageReturn: UInt8 = 0x0D
    static let space: UInt8 = 0x20
    static let quote: UInt8 = 0x22
    static let plus: UInt8 = 0x2B
    static let comma: UInt8 = 0x2C
    static let minus: UInt8 = 0x2D
    static let period: UInt8 = 0x2E
    static let slash: UInt8 = 0x2F
    static let zero: UInt8 = 0x30
    static let nine: UInt8 = 0x39
    static let colon: UInt8 = 0x3A
    static let uppercaseA: UInt8 = 0x41
    static let uppercaseE: UInt8 = 0x45
    static let uppercaseF: UInt8 = 0x46
    static let openBracket: UInt8 = 0x5B
    static let backslash: UInt8 = 0x5C
    static let closeBracket: UInt8 = 0x5D
    static let lowercaseA: UInt8 = 0x61
    static let lowercaseB: UInt8 = 0x62
    static let lowercaseE: UInt8 = 0x65
    static let lowercaseF: UInt8 = 0x66
    static let lowercaseN: UInt8 = 0x6E
    static let lowercaseR: UInt8 = 0x72
    static let lowercaseT: UInt8 = 0x74
    static let lowercaseU: UInt8 = 0x75
    static let openBrace: UInt8 = 0x7B
    static let closeBrace: UInt8 = 0x7D
}
