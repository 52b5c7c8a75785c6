import Foundation

/// Stable JSON for `--json`: sorted keys, no escaped slashes, and every time one format —
/// RFC 3339 in UTC with milliseconds (`2026-12-05T18:45:06.123Z`), as the README says.
enum JSONOutput {
    static func render<T: Encodable>(_ value: T, pretty: Bool = true) throws -> String {
        String(decoding: try encoder(pretty: pretty).encode(value), as: UTF8.self)
    }

    static func encoder(pretty: Bool = true) -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(timestamp(date))
        }
        return encoder
    }

    /// A time as every JSON output of lfsync writes it.
    static func timestamp(_ date: Date) -> String {
        date.formatted(.iso8601.year().month().day().dateSeparator(.dash).time(includingFractionalSeconds: true).timeSeparator(.colon).timeZone(separator: .omitted))
    }
}
