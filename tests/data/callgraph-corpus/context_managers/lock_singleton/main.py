import threading

class Cache:
    def __init__(self):
        self._lock = threading.Lock()
        self._data = {}

    def put(self, k, v):
        with self._lock:
            self._store(k, v)

    def _store(self, k, v):
        self._data[k] = v

CACHE = Cache()
CACHE.put("a", 1)
