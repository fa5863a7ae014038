"""The production deployment: the compose stack's files, and `deploy.check`, which runs them.

A package only so that the check imports as `deploy.check` (`make deploy-check`); nothing here is installed.
"""
