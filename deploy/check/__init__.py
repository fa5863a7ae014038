"""`make deploy-check`: the compose stack of `deploy/` built, started, killed and upgraded on this machine.

It builds the stack's base images from Debian packages (no image registry is needed), runs the
`replicas` and `billing` profiles as `deploy/README.md` tells users (podman-compose for `docker compose`), and
checks it through the published ports. Not a test of the approval layer itself (`tests/`).
"""
