/**
 * Versioned schema migrations of the PostgreSQL job store, applied at start-up inside one
 * transaction that first takes a transaction-level advisory lock: replicas starting together
 * queue on the lock, and the second finds everything applied. A database whose schema is newer
 * than the code is refused. Append new migrations; never edit one that has shipped.
 */
import { type Sql, transaction } from "./client.ts"

export interface PgMigration {
  readonly version: number
  readonly name: string
  readonly sql: string
}

/** Advisory lock key of the migrations (arbitrary, fixed: "svc" jobs). */
export const MIGRATION_LOCK_KEY = 0x5356_4301

/** Channel of the change notifications: payload `<tenant>\n<job id>`. */
export const CHANGE_CHANNEL = "svc_jobs"

export const PG_MIGRATIONS: ReadonlyArray<PgMigration> = [
  {
    version: 1,
    name: "jobs, node sessions, change notifications",
    // Same columns as the SQLite store (times in ms since the epoch, JSON as text with the same
    // codec), plus the lease: `node_id` with the node session's `expires_at`, and `fence`.
    sql: `
      CREATE TABLE jobs (
        seq          BIGSERIAL PRIMARY KEY,
        id           TEXT    NOT NULL UNIQUE,
        tenant_id    TEXT    NOT NULL DEFAULT '',
        state        TEXT    NOT NULL CHECK (state IN ('pending', 'running', 'finished', 'cancelled', 'failed')),
        request      TEXT    NOT NULL,
        created_at   BIGINT  NOT NULL,
        started_at   BIGINT,
        finished_at  BIGINT,
        node_id      TEXT,
        result       TEXT,
        error        TEXT,
        frames_done  BIGINT  NOT NULL DEFAULT 0,
        submitted_by TEXT,
        fence        BIGINT  NOT NULL DEFAULT 0
      );
      CREATE INDEX jobs_tenant_state_seq ON jobs (tenant_id, state, seq);
      CREATE INDEX jobs_tenant_seq ON jobs (tenant_id, seq);
      CREATE INDEX jobs_state_node ON jobs (state, node_id);

      CREATE TABLE node_sessions (
        node_id        TEXT    PRIMARY KEY,
        tenant_id      TEXT    NOT NULL CHECK (tenant_id <> ''),
        name           TEXT    NOT NULL,
        slots          INTEGER NOT NULL,
        version        TEXT    NOT NULL,
        registered_at  BIGINT  NOT NULL,
        last_heartbeat BIGINT  NOT NULL,
        expires_at     BIGINT  NOT NULL
      );
      CREATE INDEX node_sessions_expires ON node_sessions (expires_at);

      CREATE FUNCTION svc_jobs_notify() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('${CHANGE_CHANNEL}', NEW.tenant_id || E'\\n' || NEW.id);
        RETURN NULL;
      END $$;
      CREATE TRIGGER jobs_notify AFTER INSERT OR UPDATE ON jobs
        FOR EACH ROW EXECUTE FUNCTION svc_jobs_notify();
    `
  },
  {
    version: 2,
    name: "row-level security on jobs",
    // A second wall behind the tenant clause of every statement: each transaction sets
    // svc.tenant (or svc.maintenance for the cross-tenant maintenance reads); without either it
    // sees no job. FORCE applies it to the table owner too (a superuser or BYPASSRLS role is
    // never subject to it: the controller warns at start-up).
    sql: `
      ALTER TABLE jobs ENABLE ROW LEVEL SECURITY;
      ALTER TABLE jobs FORCE ROW LEVEL SECURITY;
      CREATE POLICY jobs_tenant ON jobs
        USING (
          current_setting('svc.maintenance', true) = 'on'
          OR (tenant_id <> '' AND tenant_id = current_setting('svc.tenant', true))
        )
        WITH CHECK (tenant_id <> '' AND tenant_id = current_setting('svc.tenant', true));
    `
  },
  {
    version: 3,
    name: "jobs_idempotency_key",
    // SubmitJobRequest.idempotency_key (issue 21): unique per tenant, NULL for most jobs.
    sql: `
      ALTER TABLE jobs ADD COLUMN idempotency_key TEXT;
      CREATE UNIQUE INDEX jobs_tenant_idempotency_key ON jobs (tenant_id, idempotency_key)
        WHERE idempotency_key IS NOT NULL;
    `
  },
  {
    version: 4,
    name: "sweep lease, controller clock",
    // sweep_lease: the one replica that runs the re-queue sweep (a row, not a session-level
    // advisory lock: see `exclusive`). controller_clock: when a replica last reached the database
    // (0: never), so that time when none could (the database down) does not count against the
    // node sessions, whose heartbeats could not be recorded then.
    sql: `
      CREATE TABLE sweep_lease (
        id         INTEGER PRIMARY KEY CHECK (id = 1),
        holder     TEXT    NOT NULL,
        expires_at BIGINT  NOT NULL
      );
      INSERT INTO sweep_lease (id, holder, expires_at) VALUES (1, '', 0);
      CREATE TABLE controller_clock (
        id        INTEGER PRIMARY KEY CHECK (id = 1),
        last_seen BIGINT  NOT NULL
      );
      INSERT INTO controller_clock (id, last_seen) VALUES (1, 0);
    `
  },
  {
    version: 5,
    name: "jobs_rendition_progress",
    // A ladder job's frames scored per rendition (issue 18), as the SQLite store's migration 4:
    // JSON text [{label, frames_done}], NULL for pair jobs and before a node reports.
    sql: "ALTER TABLE jobs ADD COLUMN rendition_progress TEXT;"
  },
  // Version 6 is issue 27's (row-level security on every tenant table).
  {
    version: 7,
    name: "job_segments",
    // Segment jobs (issue 30): the SQLite store's migration 7, with row-level security like
    // jobs (the same policy). This store does not split jobs yet (JobStore.segments is absent:
    // it hands segment jobs out whole); the table is here so both stores share one schema.
    sql: `
      CREATE TABLE job_segments (
        tenant_id    TEXT    NOT NULL,
        job_id       TEXT    NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
        idx          INTEGER NOT NULL,
        first_frame  BIGINT  NOT NULL,
        frame_count  BIGINT  NOT NULL,
        state        TEXT    NOT NULL CHECK (state IN ('pending', 'running', 'finished', 'cancelled', 'failed')),
        node_id      TEXT,
        fence        BIGINT  NOT NULL DEFAULT 0,
        attempts     INTEGER NOT NULL DEFAULT 0,
        claimed_at   BIGINT,
        frames_done  BIGINT  NOT NULL DEFAULT 0,
        result       TEXT,
        error        TEXT,
        PRIMARY KEY (job_id, idx)
      );
      CREATE INDEX job_segments_tenant_state ON job_segments (tenant_id, state, job_id, idx);
      CREATE INDEX job_segments_state_node ON job_segments (state, node_id);
      ALTER TABLE job_segments ENABLE ROW LEVEL SECURITY;
      ALTER TABLE job_segments FORCE ROW LEVEL SECURITY;
      CREATE POLICY job_segments_tenant ON job_segments
        USING (
          current_setting('svc.maintenance', true) = 'on'
          OR (tenant_id <> '' AND tenant_id = current_setting('svc.tenant', true))
        )
        WITH CHECK (tenant_id <> '' AND tenant_id = current_setting('svc.tenant', true));
    `
  }
]

/** Applies the missing migrations under the advisory lock; returns the versions applied. */
export const migratePostgres = async (
  sql: Sql,
  migrations: ReadonlyArray<PgMigration>,
  now: number
): Promise<ReadonlyArray<number>> =>
  transaction(sql, async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`
    await tx`CREATE TABLE IF NOT EXISTS schema_migrations (
      version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)`
    const [row] = await tx<Array<{ version: number | null }>>`SELECT max(version) AS version FROM schema_migrations`
    const found = row?.version ?? 0
    const latest = migrations.reduce((max, migration) => Math.max(max, migration.version), 0)
    if (found > latest) {
      throw new Error(
        `the store has schema version ${found}, newer than this controller's ${latest}; run a newer controller`
      )
    }
    const applied: Array<number> = []
    for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
      if (migration.version <= found) continue
      await tx.unsafe(migration.sql)
      await tx`INSERT INTO schema_migrations (version, name, applied_at)
        VALUES (${migration.version}, ${migration.name}, ${now})`
      applied.push(migration.version)
    }
    return applied
  })
