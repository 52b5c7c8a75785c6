import Foundation
import LFSyncFuzzing
#if LFSYNC_LIBFUZZER
import CFuzzerDriver
#endif

/// `lfsync-fuzz TARGET [libFuzzer options and corpus directories]`
///
/// Built by `make fuzz` with `-sanitize=fuzzer,address -D LFSYNC_LIBFUZZER`, it
/// hands TARGET's inputs to libFuzzer. In an ordinary build it replays the
/// files of the corpus directories given, one run of TARGET each — what a
/// finding needs to be reproduced under a debugger.
let arguments = CommandLine.arguments
let targets = FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")
if arguments.dropFirst().first == "--list" {
    print(FuzzTarget.allCases.map(\.rawValue).joined(separator: "\n"))
    exit(0)
}
// libFuzzer runs this binary again for -merge and -jobs, with the arguments it was given
// (the target's name is not among them): the name travels in the environment too.
let named = arguments.count >= 2 ? FuzzTarget(rawValue: arguments[1]) : nil
guard let target = named ?? ProcessInfo.processInfo.environment["LFSYNC_FUZZ_TARGET"].flatMap(FuzzTarget.init(rawValue:)) else {
    FileHandle.standardError.write(Data("usage: lfsync-fuzz TARGET [options] [corpus…]\ntargets: \(targets)\n".utf8))
    exit(64)
}
setenv("LFSYNC_FUZZ_TARGET", target.rawValue, 1)
let rest = Array(arguments.dropFirst(named == nil ? 1 : 2))

#if LFSYNC_LIBFUZZER
/// libFuzzer's callback is a C function pointer: it can capture nothing, so the target lives here.
nonisolated(unsafe) var selected = target
var argc = Int32(rest.count + 1)
var argv: [UnsafeMutablePointer<CChar>?] = ([arguments[0]] + rest).map { strdup($0) } + [nil]
let status = argv.withUnsafeMutableBufferPointer { buffer -> Int32 in
    var base = buffer.baseAddress
    return LLVMFuzzerRunDriver(&argc, &base) { data, size in
        let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
        selected.run(bytes)
        return 0
    }
}
exit(status)
#else
var runs = 0
for directory in rest {
    let url = URL(fileURLWithPath: directory)
    let names = (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? [url.lastPathComponent]
    for name in names.sorted() {
        let file = names == [url.lastPathComponent] ? url : url.appendingPathComponent(name)
        guard let data = FileManager.default.contents(atPath: file.path) else { continue }
        target.run(Array(data))
        runs += 1
    }
}
print("\(target.rawValue): \(runs) inputs replayed, none failed")
#endif
