"""Channels: places besides the web app where people hear of approvals and answer them (Slack, e-mail).

A channel is one more client of the same gate: its answers go through `server.admission.runs.admit_run_as`
and `pipeline.decide` like an API call's, so roles, separation of duties, quorum, audit and receipts
hold. Not for deciding anything on its own: a link in a message opens the web app, nothing more.
"""
