#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A rules file's modification time and size, read with one `lstat`: what the Firestore and
/// Storage rules-file watchers compare every half second to see an edit.
///
/// `FileManager.attributesOfItem` answers the same question through a dictionary of boxed
/// attributes, user and group names looked up included (~29k instructions a poll): natively a
/// few microseconds a second, but under callgrind, where a slow run lasts minutes, it was up to
/// 15k of every counted Firestore commit.
public struct RulesFileStamp: Equatable, Sendable {
    /// The modification time: seconds and nanoseconds since the epoch.
    public let seconds: Int
    public let nanoseconds: Int
    /// The size in bytes.
    public let size: Int

    /// The stamp of the file at `path`, nil when there is none. A symbolic link's own stamp, as
    /// `attributesOfItem` gave it (`lstat`): the watchers kept what they compared before.
    public static func of(_ path: String) -> RulesFileStamp? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        #if canImport(Darwin)
        let time = info.st_mtimespec
        #else
        let time = info.st_mtim
        #endif
        return RulesFileStamp(seconds: Int(time.tv_sec), nanoseconds: Int(time.tv_nsec), size: Int(info.st_size))
    }
}
