/// Escaping for roff input, so that no text from the command model can be read
/// as a request, an escape sequence or a font change, whatever it contains.
enum Roff {
    /// Prose for a text line. A word that starts with a hyphen (`--json`, `-q`)
    /// is something to type, so its hyphens become `\-`, which every formatter
    /// renders as a copy-and-pasteable minus; hyphens inside ordinary words
    /// (`peer-to-peer`) stay hyphens, so they may break at the end of a line.
    static func prose(_ text: String) -> String {
        escape(text, everyHyphenIsMinus: false)
    }

    /// Text the reader types (command names, option names, examples): every
    /// hyphen is a minus.
    static func literal(_ text: String) -> String {
        escape(text, everyHyphenIsMinus: true)
    }

    static func bold(_ escaped: String) -> String { "\\fB\(escaped)\\fR" }
    static func italic(_ escaped: String) -> String { "\\fI\(escaped)\\fR" }

    /// One input line of escaped text. A line starting with `.` or `'` would be
    /// a control line; `\&` (a zero-width character) keeps it text.
    static func line(_ escaped: String) -> String {
        escaped.hasPrefix(".") || escaped.hasPrefix("'") ? "\\&" + escaped : escaped
    }

    /// Text lines for a block of prose that may hold newlines. Blank lines
    /// become `.PP` (a blank input line is a formatting mistake in man(7)), and
    /// leading blanks are dropped because they force a break.
    static func paragraphs(_ text: String) -> [String] {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { raw in
            let trimmed = raw.drop { $0 == " " || $0 == "\t" }
            return trimmed.isEmpty ? ".PP" : line(prose(String(trimmed)))
        }
    }

    /// A macro argument: quoted when it holds blanks or is empty; a `"` inside
    /// quotes is written `""`.
    static func argument(_ escaped: String) -> String {
        guard escaped.isEmpty || escaped.contains(" ") || escaped.contains("\"") else { return escaped }
        return "\"" + String(escaped.flatMap { $0 == "\"" ? ["\"", "\""] : [$0] }) + "\""
    }

    private static func escape(_ text: String, everyHyphenIsMinus: Bool) -> String {
        var out = ""
        var atWordStart = true
        var wordIsOption = false
        for scalar in text.unicodeScalars {
            if scalar == " " || scalar == "\t" || scalar == "\n" {
                out += " "
                atWordStart = true
                continue
            }
            if atWordStart {
                // Opening punctuation does not start the word: "(--json)" is an option.
                if !"([{'\"`".unicodeScalars.contains(scalar) {
                    wordIsOption = scalar == "-"
                    atWordStart = false
                }
            }
            switch scalar {
            case "\\": out += "\\e"
            case "-": out += everyHyphenIsMinus || wordIsOption ? "\\-" : "-"
            case _ where scalar.isASCII && scalar.value >= 0x20 && scalar.value != 0x7F:
                out.unicodeScalars.append(scalar)
            case _ where scalar.isASCII:
                continue  // control characters have no place in a manual
            default:
                // Non-ASCII as a named Unicode escape: groff without preconv
                // and mandoc both read it, whatever the input encoding.
                let hex = String(scalar.value, radix: 16, uppercase: true)
                out += "\\[u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex + "]"
            }
        }
        return out
    }
}
