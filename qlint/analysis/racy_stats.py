"""When a stat taken now may vouch for a file's content in a later run.

A file changed again within one file system timestamp tick keeps its mtime (and, often, its
size): a stat whose mtime is this close to when it was taken may be shared by a change made
after the content was read, so it vouches for nothing later. One window for every store
that trusts stats across runs: the results cache, the project listings, the scan memo and
the wrapper index.
"""

RACY_NS = 2_000_000_000
