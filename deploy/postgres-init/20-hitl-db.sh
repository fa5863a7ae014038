#!/bin/sh
# Runs once, when the PostgreSQL volume is first created: a database of its own for the approval layer's
# records (decisions, receipts, audit trail, claims, leases, outbox), owned by the role `hitl`. Nobody
# else may connect to it: not the `business` role the agents' tools and SQL console use.
set -eu
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" <<SQL
CREATE ROLE hitl LOGIN PASSWORD '${HITL_DB_PASSWORD}';
CREATE DATABASE hitl OWNER hitl;
REVOKE ALL ON DATABASE hitl FROM PUBLIC;
SQL
