/// One SQLite value, for binding parameters and for reading columns whose
/// type is not known in advance.
///
/// SQLite has no unsigned integers; `UInt64` sizes and inodes are stored by
/// bit pattern (`integer(unsigned:)` / `SQLiteRow.uint64(at:)`), which round-trips
/// exactly and only makes values above `Int64.max` sort oddly, which none do.
package enum SQLiteValue: Hashable, Sendable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])

    package static func integer(unsigned value: UInt64) -> SQLiteValue { .integer(Int64(bitPattern: value)) }

    package static func optional(_ value: String?) -> SQLiteValue { value.map(SQLiteValue.text) ?? .null }
}

extension SQLiteValue: ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByStringLiteral, ExpressibleByNilLiteral
{
    package init(integerLiteral value: Int64) { self = .integer(value) }
    package init(floatLiteral value: Double) { self = .real(value) }
    package init(stringLiteral value: String) { self = .text(value) }
    package init(nilLiteral: ()) { self = .null }
}
