/// A library-relative path that has passed the receiver's checks, as
/// components: the only form in which a name from the wire reaches the file
/// system (ARCHITECTURE.md, "Receiver safety").
///
/// Two paths are equal when their bytes are: Swift's `String` equality would
/// call the NFC and NFD spellings of "Ü" equal, but on Linux they name two
/// different files.
public struct LibraryPath: Hashable, Sendable, CustomStringConvertible {
    /// Matches `FileManifest.Limits.maxPathBytes` (and Linux's `PATH_MAX`).
    public static let maxPathBytes = FileManifest.Limits.maxPathBytes
    /// `NAME_MAX` on every common Linux file system.
    public static let maxComponentBytes = 255
    /// The scanner does not descend deeper, so a deeper file would never be seen again.
    public static let maxComponents = DirectoryWalker.maxDepth

    public let components: [String]
    /// `/`-joined, as on the wire: kept as it came, since the receiver asks for
    /// it several times per file (index rows, names to stat) and joining is an allocation.
    public let string: String

    private init(components: [String], string: String) {
        self.components = components
        self.string = string
    }

    public var relativePath: RelativePath { RelativePath(string) }

    /// Escaped for showing to people.
    public var description: String { PrintablePath.escape(string) }

    /// The last component: the file's name.
    public var name: String { components[components.count - 1] }

    /// The directories leading to the file; empty for a file at the library root.
    public var parentComponents: ArraySlice<String> { components.dropLast() }

    /// The same directory, another file name. `name` must itself be a valid
    /// component (the installer builds it from one that was).
    package func replacingName(with name: String) -> LibraryPath {
        var components = components
        components[components.count - 1] = name
        return LibraryPath(components: components, string: components.joined(separator: "/"))
    }

    public static func == (lhs: LibraryPath, rhs: LibraryPath) -> Bool {
        PathComponentsKey(lhs.components[...]) == PathComponentsKey(rhs.components[...])
    }

    public func hash(into hasher: inout Hasher) {
        PathComponentsKey(components[...]).hash(into: &hasher)
    }

    /// Checks a path received from a peer. The checks run on the raw bytes
    /// before anything else looks at the string, and the first failing rule
    /// is reported.
    package static func validate(_ path: RelativePath) throws(ReceivePathError) -> LibraryPath {
        try validate(path.string)
    }

    package static func validate(_ path: String) throws(ReceivePathError) -> LibraryPath {
        // Every received path passes here, several times on its way in: one pass over
        // the string's own bytes (a native string is contiguous, so no copy), and the
        // components cut straight from them.
        var text = path
        let cut = text.withUTF8 { bytes in Result { () throws(ReceivePathError) in try Self.cutComponents(of: bytes, path: path) } }
        let components = try cut.get()
        if isReservedName(components[0]) { throw ReceivePathError(.reserved, path: path) }
        return LibraryPath(components: components, string: path)
    }

    /// The rules in the order `validate` reports them, on the path's UTF-8 bytes.
    private static func cutComponents(of bytes: UnsafeBufferPointer<UInt8>, path: String) throws(ReceivePathError) -> [String] {
        let separator = UInt8(ascii: "/"), dot = UInt8(ascii: ".")
        guard !bytes.isEmpty else { throw ReceivePathError(.empty, path: path) }
        guard bytes[0] != separator else { throw ReceivePathError(.absolute, path: path) }
        guard !containsForbidden(bytes) else { throw ReceivePathError(.controlCharacter, path: path) }
        guard bytes.count <= maxPathBytes else { throw ReceivePathError(.tooLong(bytes: bytes.count), path: path) }
        var componentCount = 1
        for byte in bytes where byte == separator { componentCount += 1 }
        guard componentCount <= maxComponents else {
            throw ReceivePathError(.tooDeep(components: componentCount), path: path)
        }
        var components: [String] = []
        components.reserveCapacity(componentCount)
        var start = 0
        while true {
            var end = start
            while end < bytes.count, bytes[end] != separator { end += 1 }
            let length = end - start
            guard length > 0 else { throw ReceivePathError(.emptyComponent, path: path) }
            if bytes[start] == dot, length == 1 || (length == 2 && bytes[start + 1] == dot) {
                throw ReceivePathError(.dotComponent, path: path)
            }
            guard length <= maxComponentBytes else {
                throw ReceivePathError(.componentTooLong(bytes: length), path: path)
            }
            // Cut at an ASCII byte, so on a character boundary of valid UTF-8.
            components.append(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self))
            guard end < bytes.count else { break }
            start = end + 1
        }
        return components
    }

    /// NUL, and the control characters no real file name uses: what is left of
    /// C0, DEL and C1 once tab, line feed and carriage return are allowed. Those
    /// three do occur in names people have (macOS keeps a folder's icon in a
    /// file called `Icon\r`; scripts leave names with a newline), so they are
    /// carried — and escaped wherever a path is shown. A backslash is an
    /// ordinary byte of a Linux name, never a separator: the wire's separator is `/`.
    /// `isForbidden` over the UTF-8 bytes, as every received path is checked:
    /// C0 and DEL are single bytes, C1 (U+0080…U+009F) is 0xC2 followed by
    /// 0x80…0x9F — a `String`'s bytes are always valid UTF-8.
    package static func containsForbidden<Bytes: Sequence<UInt8>>(_ utf8: Bytes) -> Bool {
        var afterC2 = false
        for byte in utf8 {
            if afterC2, (0x80...0x9F).contains(byte) { return true }
            afterC2 = byte == 0xC2
            if byte == 0x7F || (byte < 0x20 && byte != 0x09 && byte != 0x0A && byte != 0x0D) { return true }
        }
        return false
    }

    package static func isForbidden(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09, 0x0A, 0x0D: false
        default: PrintablePath.isControl(scalar)
        }
    }

    /// `.lfsync` in any case, including spellings a case-folding file system
    /// (ext4 `casefold`, exFAT) would map onto it, such as a long s `ſ` for
    /// `s`: upper- then lower-casing folds those together. The installer also
    /// compares inodes, for whatever folding rule this does not foresee.
    package static func isReservedName(_ component: String) -> Bool {
        // ASCII folds only onto ASCII: compared byte by byte, without Unicode case mapping.
        if component.utf8.allSatisfy({ $0 < 0x80 }) {
            return component.utf8.count == LibraryLayout.stateDirectoryName.utf8.count
                && zip(component.utf8, LibraryLayout.stateDirectoryName.utf8).allSatisfy { byte, reserved in
                    (byte >= 0x41 && byte <= 0x5A ? byte + 0x20 : byte) == reserved
                }
        }
        return component.uppercased().lowercased() == LibraryLayout.stateDirectoryName
    }
}
