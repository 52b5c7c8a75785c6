/// Path components compared and hashed by their bytes, as a dictionary key.
///
/// `String` equality is canonical equivalence: it would merge the NFC and NFD
/// spellings of a name, which on Linux are two files (or two directories).
/// Holds a slice of the caller's own components, so a key costs no copy.
package struct PathComponentsKey: Hashable {
    package let components: ArraySlice<String>

    package init(_ components: ArraySlice<String>) {
        self.components = components
    }

    package static func == (lhs: PathComponentsKey, rhs: PathComponentsKey) -> Bool {
        lhs.components.count == rhs.components.count
            && zip(lhs.components, rhs.components).allSatisfy { $0.utf8.elementsEqual($1.utf8) }
    }

    package func hash(into hasher: inout Hasher) {
        for var component in components {
            hasher.combine(component.utf8.count)
            component.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        }
    }
}
