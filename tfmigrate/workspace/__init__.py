"""Settings, the files to visit, the cache, the worker pool and writes."""

CACHE_DIR = ".tfmigrate_cache"  # in the folder of the first path's configuration (or the current one)
