/// Quoting for text from the command model placed inside generated scripts.
enum ShellQuoting {
    /// A POSIX single-quoted word (bash, zsh): nothing inside is special but
    /// `'` itself, which is closed, escaped and reopened.
    static func single(_ text: String) -> String {
        "'" + text.replacingEach("'", with: #"'\''"#) + "'"
    }

    /// A fish single-quoted word: fish allows `\'` and `\\` inside quotes.
    static func fishSingle(_ text: String) -> String {
        "'" + text.replacingEach("\\", with: #"\\"#).replacingEach("'", with: #"\'"#) + "'"
    }

    /// A name usable in a shell function name (`_lfsync_dry_run`).
    static func identifier(_ text: String) -> String {
        String(text.map { $0.isASCII && ($0.isLetter || $0.isNumber) ? $0 : "_" })
    }
}

extension String {
    /// Character-wise replacement; avoids Foundation for a one-character search.
    func replacingEach(_ character: Character, with replacement: String) -> String {
        var out = ""
        for each in self {
            if each == character { out += replacement } else { out.append(each) }
        }
        return out
    }
}
