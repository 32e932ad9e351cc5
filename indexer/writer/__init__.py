"""Who may write an index: one writer per index, a lock in a local folder, a lease on
object storage.

A local folder's writer holds ``writer.lock`` (``_lock``: a ``flock``, freed by the kernel
however its holder dies); an index on object storage has no folder to lock, and its writer
holds ``writer.lease`` (``_lease``: a lease object changed only by conditional puts,
renewed while the writer runs and expired when it stops). Both refuse a second writer with
a ``WriterBusyError`` naming the first (``_info``), and both name it to any other process
that asks (``find_writer``), with the URL where a server answers. ``writer_claim`` picks
the one an index needs (``_claim``).
"""

from indexer.writer._claim import WriterClaim, find_writer, read_only_error, writer_claim
from indexer.writer._info import WriterBusyError, WriterInfo
from indexer.writer._lease import LEASE_OBJECT, LOST_EXIT_STATUS, WriterLease, current_lease_writer
from indexer.writer._lock import LOCK_FILE, WriterLock, current_writer

__all__ = [
    "LEASE_OBJECT",
    "LOCK_FILE",
    "LOST_EXIT_STATUS",
    "WriterBusyError",
    "WriterClaim",
    "WriterInfo",
    "WriterLease",
    "WriterLock",
    "current_lease_writer",
    "current_writer",
    "find_writer",
    "read_only_error",
    "writer_claim",
]
