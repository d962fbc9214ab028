extension DateText {
    /// The most year digits read: `Date`'s range needs 301.
    static let maximumYearDigits = 320

    /// The instant a date text stands for, in seconds after 2001-01-01T00:00:00Z (a
    /// `Date`'s `timeIntervalSinceReferenceDate`), read from its UTF-8 bytes.
    ///
    /// - Throws: ``DateTextError/malformed(text:reason:)`` for text that is not a date
    ///   (including impossible dates such as February 30 and leap seconds), and
    ///   ``DateTextError/outOfRange(text:)`` for a date too far away for `Date`.
    /// - Complexity: O(*n*) in the length of the text, for years up to ±10¹¹; O(*d*²) in
    ///   the year's digits beyond that.
    package static func referenceSeconds(parsing text: UnsafeBufferPointer<UInt8>) throws(DateTextError) -> Double {
        var reader = Reader(text: text)
        func malformed(_ reason: String) -> DateTextError {
            .malformed(text: DateTextError.excerpt(text), reason: reason)
        }

        // Year: four digits, or a sign and at least four.
        var yearIsNegative = false
        var hasSign = false
        if let sign = reader.peek, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
            hasSign = true
            yearIsNegative = sign == UInt8(ascii: "-")
            reader.advance()
        }
        let yearDigits = reader.digits()
        if hasSign {
            guard yearDigits.count >= 4 else { throw malformed("a year with a sign has at least four digits") }
        } else {
            guard yearDigits.count == 4 else { throw malformed("the year has four digits, or a sign and more") }
        }
        guard yearDigits.count <= maximumYearDigits else { throw .outOfRange(text: DateTextError.excerpt(text)) }
        var significantYear = yearDigits
        while significantYear.count > 1, text[significantYear.lowerBound] == UInt8(ascii: "0") {
            significantYear = significantYear.dropFirst()
        }

        guard reader.take(UInt8(ascii: "-")), let month = reader.twoDigits() else { throw malformed("expected -MM after the year") }
        guard reader.take(UInt8(ascii: "-")), let day = reader.twoDigits() else { throw malformed("expected -DD after the month") }

        var hour: Int64 = 0
        var minute: Int64 = 0
        var second: Int64 = 0
        var fraction = 0..<0
        if reader.take(UInt8(ascii: "T")) || reader.take(UInt8(ascii: " ")) {
            guard let hours = reader.twoDigits(), reader.take(UInt8(ascii: ":")), let minutes = reader.twoDigits() else {
                throw malformed("expected HH:MM after the date")
            }
            (hour, minute) = (hours, minutes)
            if reader.take(UInt8(ascii: ":")) {
                guard let seconds = reader.twoDigits() else { throw malformed("expected two digits of seconds") }
                second = seconds
                if reader.take(UInt8(ascii: ".")) {
                    fraction = reader.digits()
                    guard !fraction.isEmpty else { throw malformed("expected digits after the decimal point") }
                }
            }
        }

        var negativeZero = false
        if !reader.take(UInt8(ascii: "Z")), let sign = reader.peek, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
            reader.advance()
            guard reader.twoDigits() == 0, reader.take(UInt8(ascii: ":")), reader.twoDigits() == 0 else {
                throw malformed("the only offsets are +00:00 and -00:00 (UTC)")
            }
            negativeZero = sign == UInt8(ascii: "-")
        }
        guard reader.isAtEnd else { throw malformed("unexpected text after the time") }

        guard (1...12).contains(month) else { throw malformed("month \(month) is not 1...12") }
        guard hour < 24, minute < 60, second < 60 else { throw malformed("the time of day is out of range") }

        // Seconds since 1970 of the whole second, then minus 978,307,200.
        let shifted: ShiftedSeconds
        if significantYear.count <= 11 {
            var year: Int64 = 0
            for index in significantYear { year = year * 10 + Int64(text[index] - UInt8(ascii: "0")) }
            if yearIsNegative { year = -year }
            let yearModulo400 = CivilDate.floorDivided(year, by: 400).remainder
            guard (1...CivilDate.daysInMonth(month, yearModulo400: yearModulo400)).contains(day) else {
                throw malformed("day \(day) does not exist in month \(month) of that year")
            }
            let days = CivilDate.days(year: year, month: month, day: day)
            shifted = .small(days * 86_400 + hour * 3_600 + minute * 60 + second - unixOffset)
        } else {
            // The calendar repeats every 400 years: date the same day in 1970...2369, then
            // add the cycles.
            let year = WideInteger(digits: text[significantYear], trailingZeros: 0, negative: yearIsNegative)
            let (eras, yearInEra) = (year + WideInteger(-1_970)).floorDivided(by: 400)
            let nearYear = 1_970 + Int64(yearInEra)
            guard (1...CivilDate.daysInMonth(month, yearModulo400: nearYear % 400)).contains(day) else {
                throw malformed("day \(day) does not exist in month \(month) of that year")
            }
            let days = CivilDate.days(year: nearYear, month: month, day: day)
            var seconds = eras
            seconds.multiply(by: UInt64(CivilDate.secondsPerEra))
            shifted = .wide(seconds + WideInteger(days * 86_400 + hour * 3_600 + minute * 60 + second - unixOffset))
        }

        var value = try decimalValue(shifted, fraction: fraction, text: text)
        if value == 0, negativeZero { value = -0.0 }
        return value
    }

    /// Whole seconds after 2001-01-01T00:00:00Z.
    private enum ShiftedSeconds {
        case small(Int64)
        case wide(WideInteger)

        var isNegative: Bool {
            switch self {
            case .small(let value): value < 0
            case .wide(let value): value.isNegative
            }
        }
    }

    /// `whole` + 0.`fraction` (digits of `text`) as the nearest `Double`: written as a
    /// decimal number (`-12.5` for -13 + 0.5, the fraction then taken as its ten's
    /// complement), and converted by the correctly rounded `Double(String)`, unless it is
    /// exact in `Double` arithmetic.
    private static func decimalValue(
        _ whole: ShiftedSeconds, fraction: Range<Int>, text: UnsafeBufferPointer<UInt8>
    ) throws(DateTextError) -> Double {
        var fraction = fraction
        while !fraction.isEmpty, text[fraction.upperBound - 1] == UInt8(ascii: "0") { fraction = fraction.dropLast() }
        if case .small(let value) = whole, let exact = exactValue(value, fraction: fraction, text: text) { return exact }
        let complement = whole.isNegative && !fraction.isEmpty
        // The magnitude of the integer part as written: one less for a complemented fraction.
        var small: UInt64 = 0
        var wide: WideInteger?
        switch whole {
        case .small(let value):
            small = value.magnitude - (complement ? 1 : 0)
        case .wide(let value):
            let adjusted = complement ? value + WideInteger(1) : value
            wide = adjusted.isNegative ? adjusted.negated : adjusted
        }
        let integerDigits = wide?.decimalDigitCount ?? (small == 0 ? 1 : digitCount(small))
        let length = (whole.isNegative ? 1 : 0) + integerDigits + (fraction.isEmpty ? 0 : 1 + fraction.count)
        let number = String(unsafeUninitializedCapacity: length) { buffer in
            var position = 0
            if whole.isNegative {
                buffer[0] = UInt8(ascii: "-")
                position = 1
            }
            if let wide {
                position = wide.writeDecimalDigits(into: buffer, at: position)
            } else {
                var rest = small
                for index in stride(from: position + integerDigits - 1, through: position, by: -1) {
                    buffer[index] = UInt8(ascii: "0") + UInt8(rest % 10)
                    rest /= 10
                }
                position += integerDigits
            }
            if !fraction.isEmpty {
                buffer[position] = UInt8(ascii: ".")
                position += 1
                let last = fraction.upperBound - 1
                for index in fraction {
                    let digit = text[index] - UInt8(ascii: "0")
                    // 1 - 0.d₁d₂…dₙ = 0.(9-d₁)(9-d₂)…(10-dₙ) when dₙ ≠ 0.
                    let written = complement ? (index == last ? 10 - digit : 9 - digit) : digit
                    buffer[position] = UInt8(ascii: "0") + written
                    position += 1
                }
            }
            return position
        }
        guard let value = Double(number), value.isFinite else { throw .outOfRange(text: DateTextError.excerpt(text)) }
        return value
    }

    /// `whole` + 0.`fraction` computed in `Double` when that is exact: the digits make an
    /// integer below 2^53 and the divisor is a power of ten `Double` holds exactly (up to
    /// 10^22), so the one division rounds correctly. Nil otherwise.
    @inline(__always)
    private static func exactValue(_ whole: Int64, fraction: Range<Int>, text: UnsafeBufferPointer<UInt8>) -> Double? {
        guard fraction.count <= 15, whole.magnitude < 1 << 53 else { return nil }
        var digits = whole.magnitude
        for index in fraction {
            digits = digits &* 10 &+ UInt64(text[index] &- UInt8(ascii: "0"))
            if digits >= 1 << 53 { return nil }
        }
        // whole + 0.f = (whole × 10^k + f) / 10^k; for a negative whole, (whole × 10^k + f)
        // is negative: its magnitude is |whole| × 10^k − f.
        if whole < 0, !fraction.isEmpty {
            var fractionDigits: UInt64 = 0
            for index in fraction { fractionDigits = fractionDigits &* 10 &+ UInt64(text[index] &- UInt8(ascii: "0")) }
            let magnitude = whole.magnitude &* powersOfTen[fraction.count] &- fractionDigits
            return -(Double(magnitude) / Double(powersOfTen[fraction.count]))
        }
        let value = Double(digits) / Double(powersOfTen[fraction.count])
        return whole < 0 ? -value : value
    }

    /// Steps through the bytes of a date text.
    private struct Reader {
        let text: UnsafeBufferPointer<UInt8>
        var position = 0

        var isAtEnd: Bool { position == text.count }
        var peek: UInt8? { position < text.count ? text[position] : nil }

        mutating func advance() { position += 1 }

        /// Consumes `byte` if it comes next.
        @inline(__always)
        mutating func take(_ byte: UInt8) -> Bool {
            guard peek == byte else { return false }
            position += 1
            return true
        }

        /// Consumes the run of ASCII digits that comes next (maybe empty); returns its range.
        @inline(__always)
        mutating func digits() -> Range<Int> {
            let start = position
            while position < text.count, text[position] &- UInt8(ascii: "0") < 10 { position += 1 }
            return start..<position
        }

        /// Consumes exactly two digits.
        @inline(__always)
        mutating func twoDigits() -> Int64? {
            guard position + 2 <= text.count else { return nil }
            let high = text[position] &- UInt8(ascii: "0")
            let low = text[position + 1] &- UInt8(ascii: "0")
            guard high < 10, low < 10 else { return nil }
            position += 2
            return Int64(high) * 10 + Int64(low)
        }
    }
}
