"""Settings, the files to visit, the cache, the worker pool and writes."""
