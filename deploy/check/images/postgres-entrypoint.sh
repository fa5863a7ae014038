#!/bin/sh
# The official postgres image's start-up contract, the part the compose stack uses: on an empty PGDATA,
# initdb with POSTGRES_USER / POSTGRES_PASSWORD (password auth over TCP), create POSTGRES_DB, run
# /docker-entrypoint-initdb.d/*.sh and *.sql on a socket-only server; then `postgres ARGS` as postgres.
set -eu
as_postgres() { setpriv --reuid=postgres --regid=postgres --init-groups "$@"; }
if [ "${1:-}" = postgres ]; then
    : "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD is required}"
    export POSTGRES_USER="${POSTGRES_USER:-postgres}"
    export POSTGRES_DB="${POSTGRES_DB:-$POSTGRES_USER}"
    install -d -o postgres -g postgres -m 700 "$PGDATA"
    if [ ! -s "$PGDATA/PG_VERSION" ]; then
        password_file=$(mktemp)
        printf '%s\n' "$POSTGRES_PASSWORD" > "$password_file"
        chown postgres "$password_file"
        as_postgres initdb -D "$PGDATA" -U "$POSTGRES_USER" --pwfile="$password_file" \
            --encoding=UTF8 --locale=C.UTF-8 --auth-local=trust --auth-host=scram-sha-256
        rm -f "$password_file"
        echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
        as_postgres pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start
        if [ "$POSTGRES_DB" != postgres ]; then
            as_postgres psql -v ON_ERROR_STOP=1 -U "$POSTGRES_USER" -d postgres -c "CREATE DATABASE \"$POSTGRES_DB\""
        fi
        for script in /docker-entrypoint-initdb.d/*; do
            case "$script" in
                *.sh) echo "running $script"; as_postgres sh "$script" ;;
                *.sql) echo "running $script"; as_postgres psql -v ON_ERROR_STOP=1 -U "$POSTGRES_USER" -d "$POSTGRES_DB" -f "$script" ;;
                *) ;;
            esac
        done
        as_postgres pg_ctl -D "$PGDATA" -m fast -w stop
    fi
    exec setpriv --reuid=postgres --regid=postgres --init-groups "$@" -c listen_addresses='*'
fi
exec "$@"
