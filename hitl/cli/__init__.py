"""The `hitl` command: the reviewer's queue from a terminal, verification, and `hitl new agent|project`.

`main` builds the command (`hitl.cli.main:app`, the console script) from `queue` (inbox, show,
run), `decide` (approve, reject, respond, edit, answer) and `reports` (stats, verify), which share
`terminal` (options, the client, one-line errors); `stats_view` and `verify_view` print reports;
`scaffold` writes new agents and projects from `templates`.
"""
