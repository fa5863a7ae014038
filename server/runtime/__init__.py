"""The engine the package runs on: durable checkpoints, crash recovery, topology, engine workarounds.

Also the replica sets the tests and `make serve-replicas` start, and the port check of
`make dev`. The only place that reads the engine's private names (`engine_compat`); each
workaround has a test that fails once upstream fixes it. Not for requests.
"""
