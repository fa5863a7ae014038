"""The production deployment: the compose stack's files, and (in the template) `deploy.check`, which runs it.

A package only so that the check imports as `deploy.check` (`make deploy-check`); nothing here is installed.
"""
