"""A project of your own: made from a release of the template, upgraded to later releases.

`sources` is where the team shares the template (any URL git clones, spelled for git and for
copier), `releases` reads what it lists (`releases.toml`, `CHANGELOG.md`), `making` renders a
release without the demo (`hitl new project`), `finishing` is the release's own last step inside
the project, `upgrade` takes a later release (`hitl upgrade`), and `served_graphs` edits the
graphs of `langgraph.json` line by line. Not for the approval layer itself.
"""
