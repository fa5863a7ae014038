"""The approval layer's own store (the guard's ledger), apart from the business data.

Its tables and engine (`storage`), the inbox's counts kept with its rows (`inbox_counts`), the
start-up check that no business connection reaches it (`apart`), and the move of an older
release's records out of the business database (`move`).
"""
