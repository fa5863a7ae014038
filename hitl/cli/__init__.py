"""The `hitl` command: the reviewer's queue from a terminal, verification, and `hitl new agent|project`.

`main` builds the command (`hitl.cli.main:app`, the console script); `scaffold` writes new
agents and projects from `templates`; `verify_view` and `stats` print reports.
"""
