"""Running for many visitors: the worker process, the heavy-work line, pacing, the database
engine, the local cluster and HAProxy's configuration. Knows nothing of lessons."""
