"""The file watcher: keeps registered projects' indexes up to date as files change.

``WatchService`` runs one ``ProjectWatcher`` per project (watchdog's native observer,
or polling when the OS refuses more watches). Events are filtered by the walker's
ignore rules, debounced (``WatchConfig.quiet_ms``, ``max_delay_ms``) and coalesced
into one partial-update task per batch for the single writer (``IndexWorker``).
"""

from indexer.watch._debouncer import Batch, Clock, Debouncer
from indexer.watch._handler import is_editor_temp
from indexer.watch._observer import ObserverFactory, inotify_limit_reached, native_observer, polling_observer
from indexer.watch._project import BatchCallback, ProjectWatcher, TaskSink, WatchStatus
from indexer.watch._service import WatchService

__all__ = [
    "Batch",
    "BatchCallback",
    "Clock",
    "Debouncer",
    "ObserverFactory",
    "ProjectWatcher",
    "TaskSink",
    "WatchService",
    "WatchStatus",
    "inotify_limit_reached",
    "is_editor_temp",
    "native_observer",
    "polling_observer",
]
