"""The business systems the tools act on, backed by a real database.

SQLite by default, PostgreSQL when `DATABASE_URL` says so. Every write is idempotent by
the tool call id that asked for it, because a resumed graph node runs again from its top.
"""
