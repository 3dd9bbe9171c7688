import CMallocTuning
import Foundation

/// The pages of code and constant data that only start-up used, given back once the gateway listens.
///
/// Starting the gateway runs code that never runs again: the argument parser, the configuration's YAML
/// reader and checks, the store's migrations, every front end's and back end's set-up. The pages holding
/// that code stay mapped, and so counted in the process's resident set, for as long as it lives: of the
/// 47 MiB resident after start-up about 40 MiB are such file pages (benchmarks/README.md, 2026-11-29,
/// evening). Releasing the clean ones drops them from the resident set; they stay in the kernel's page
/// cache (reclaimed first when memory runs short, as no process maps them), and the code that still runs
/// maps its pages again with minor faults within its first requests.
public enum StartUpPages {
    /// Set to any value to keep the pages (to compare, or to debug with breakpoints set before start).
    public static let environmentVariable = "PUSHGATE_KEEP_START_UP_PAGES"

    /// Releases the clean file pages of the process's read-only mappings, unless the environment says not
    /// to. Never touches a page the process wrote (relocated data), anonymous memory or writable mappings.
    /// - Returns: the resident set before and after, in bytes; nil when nothing was released (kept by the
    ///   environment, or not possible on this system).
    public static func release() -> (before: Int, after: Int)? {
        if ProcessInfo.processInfo.environment[Self.environmentVariable] != nil { return nil }
        let before = Self.residentBytes()
        guard pushgate_release_clean_file_pages() >= 0, let before, let after = Self.residentBytes() else { return nil }
        return (before, after)
    }

    /// The process's resident set in bytes (from `/proc/self/statm`), or nil where there is no such file.
    static func residentBytes() -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}
