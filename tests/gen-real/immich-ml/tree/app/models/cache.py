from aiocache.backends.memory import SimpleMemoryCache
from aiocache.lock import OptimisticLock


class ModelCache:
    pass
