"""The approval layer's own behaviour in-process, on agents of their own; every project runs it."""
