import HearthCore

/// Where the Listen engine's feed and each of its shards run (`ListenEngine.feedQueue`,
/// `ListenShard.queue`): a serial queue with a thread of its own at the process's nice value, not
/// libdispatch's pool (why: `ThreadQueue`, which moved down to HearthCore so that the rules'
/// coverage fold runs on one too).
typealias ListenQueue = ThreadQueue
