#!/bin/sh
# Runs once, when the PostgreSQL volume is first created: a database and a role of its own for each store
# that no other role may reach. `business`: the data the agents' tools act on (orders, refunds, outbox, ...),
# which the ops agent's SQL console reaches as that role. `hitl`: the approval layer's records (decisions,
# receipts, the audit trail, claims, leases), which the business role cannot even connect to.
set -eu
own_database() {  # NAME PASSWORD: the role NAME owns the database NAME; PUBLIC may not connect to it
    psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" <<SQL
CREATE ROLE $1 LOGIN PASSWORD '$2';
CREATE DATABASE $1 OWNER $1;
REVOKE ALL ON DATABASE $1 FROM PUBLIC;
SQL
}
own_database business "$BUSINESS_DB_PASSWORD"
own_database hitl "$HITL_DB_PASSWORD"
