#!/bin/sh
# Runs once, when the PostgreSQL volume is first created: a database of its own for the business
# data (orders, refunds, outbox, ...), owned by a role that cannot read the Agent Server's tables.
set -eu
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" <<SQL
CREATE ROLE business LOGIN PASSWORD '${BUSINESS_DB_PASSWORD}';
CREATE DATABASE business OWNER business;
REVOKE ALL ON DATABASE business FROM PUBLIC;
SQL
