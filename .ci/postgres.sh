# A throwaway PostgreSQL cluster on a loopback port under a temp dir, for the store tests.
# Sourced by .ci/run; exports TOOLGOLD_TEST_POSTGRES_URL when the server is up.
start_throwaway_postgres() {
  local bindir
  bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  if [ -z "$bindir" ]; then echo "postgres: not installed; postgres tests will be skipped"; return 0; fi
  PG_TMP=$(mktemp -d /tmp/toolgold-pg.XXXXXX)
  chown postgres "$PG_TMP" 2>/dev/null || true
  local port=${TOOLGOLD_PG_PORT:-54329}
  local as=(); [ "$(id -u)" = 0 ] && as=(runuser -u postgres --)
  "${as[@]}" "$bindir/initdb" -D "$PG_TMP/data" -U toolgold --auth=trust >/dev/null
  "${as[@]}" "$bindir/pg_ctl" -D "$PG_TMP/data" -l "$PG_TMP/log" -w \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $PG_TMP -c fsync=off" start >/dev/null
  "${as[@]}" "$bindir/createdb" -h 127.0.0.1 -p "$port" -U toolgold toolgold_test
  export TOOLGOLD_TEST_POSTGRES_URL="postgresql+psycopg://toolgold@127.0.0.1:$port/toolgold_test"
  PG_BINDIR=$bindir
  echo "postgres: throwaway cluster on 127.0.0.1:$port"
}

stop_throwaway_postgres() {
  if [ -n "${PG_TMP:-}" ] && [ -d "$PG_TMP/data" ]; then
    local as=(); [ "$(id -u)" = 0 ] && as=(runuser -u postgres --)
    "${as[@]}" "$PG_BINDIR/pg_ctl" -D "$PG_TMP/data" -m fast stop >/dev/null 2>&1 || true
    rm -rf "$PG_TMP"
  fi
}
