/**
 * Schema migrations of the SQLite job store. Each migration runs once, in its own IMMEDIATE
 * transaction together with the `schema_migrations` row that records it, so a crash mid-way leaves
 * either the old or the new schema, and two processes opening one file never apply one twice.
 * Append new migrations at the end; never edit one that has shipped.
 */
import type { Database } from "bun:sqlite"

export interface Migration {
  readonly version: number
  readonly name: string
  readonly sql: string
}

export const MIGRATIONS: ReadonlyArray<Migration> = [
  {
    version: 1,
    name: "jobs",
    // `seq` orders jobs (FIFO hand-out, newest-first listings) without trusting clock ties.
    // tenant_id defaults to '' so a row written without a tenant (pre-gateway) belongs to nobody.
    sql: `
      CREATE TABLE jobs (
        seq          INTEGER PRIMARY KEY AUTOINCREMENT,
        id           TEXT    NOT NULL UNIQUE,
        tenant_id    TEXT    NOT NULL DEFAULT '',
        state        TEXT    NOT NULL CHECK (state IN ('pending', 'running', 'finished', 'cancelled', 'failed')),
        request      TEXT    NOT NULL,
        created_at   INTEGER NOT NULL,
        started_at   INTEGER,
        finished_at  INTEGER,
        node_id      TEXT,
        result       TEXT,
        error        TEXT,
        frames_done  INTEGER NOT NULL DEFAULT 0,
        submitted_by TEXT
      );
      CREATE INDEX jobs_tenant_state_seq ON jobs (tenant_id, state, seq);
      CREATE INDEX jobs_tenant_seq ON jobs (tenant_id, seq);
      CREATE INDEX jobs_state_node ON jobs (state, node_id);
    `
  },
  {
    version: 2,
    name: "job fence",
    // The fencing counter of a job's lease (+1 at hand-out, take-over, re-queue).
    sql: "ALTER TABLE jobs ADD COLUMN fence INTEGER NOT NULL DEFAULT 0;"
  },
  {
    version: 3,
    name: "jobs_idempotency_key",
    // SubmitJobRequest.idempotency_key: unique per tenant, absent (NULL) for most jobs.
    sql: `
      ALTER TABLE jobs ADD COLUMN idempotency_key TEXT;
      CREATE UNIQUE INDEX jobs_tenant_idempotency_key ON jobs (tenant_id, idempotency_key)
        WHERE idempotency_key IS NOT NULL;
    `
  },
  {
    version: 4,
    name: "jobs_rendition_progress",
    // A ladder job's frames scored per rendition (issue 18): JSON [{label, frames_done}], NULL
    // for pair jobs and before a node reports; existing rows read as "none reported".
    sql: "ALTER TABLE jobs ADD COLUMN rendition_progress TEXT;"
  },
  // Versions 5 and 6 are PostgreSQL's (jobs_rendition_progress there, row-level security of
  // issue 27); the SQLite ledger skips them.
  {
    version: 7,
    name: "job_segments",
    // Segment jobs (issue 30): a job's segments once its plan is reported, each with its own
    // lease (node_id, fence), hand-outs (attempts) and result (lossless per-frame values, merged
    // into the job's result when the last one finishes).
    sql: `
      CREATE TABLE job_segments (
        tenant_id    TEXT    NOT NULL,
        job_id       TEXT    NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
        idx          INTEGER NOT NULL,
        first_frame  INTEGER NOT NULL,
        frame_count  INTEGER NOT NULL,
        state        TEXT    NOT NULL CHECK (state IN ('pending', 'running', 'finished', 'cancelled', 'failed')),
        node_id      TEXT,
        fence        INTEGER NOT NULL DEFAULT 0,
        attempts     INTEGER NOT NULL DEFAULT 0,
        claimed_at   INTEGER,
        frames_done  INTEGER NOT NULL DEFAULT 0,
        result       TEXT,
        error        TEXT,
        PRIMARY KEY (job_id, idx)
      );
      CREATE INDEX job_segments_tenant_state ON job_segments (tenant_id, state, job_id, idx);
      CREATE INDEX job_segments_state_node ON job_segments (state, node_id);
    `
  },
  {
    version: 8,
    name: "jobs_memory_need",
    // Issue 27: the memory a node estimated a job needs (decoders and scorer) when it handed the
    // job back for want of free memory; claims skip the job for nodes with less free. NULL: not
    // known (no node has probed it, or none had to hand it back).
    sql: "ALTER TABLE jobs ADD COLUMN memory_need INTEGER;"
  },
  {
    version: 9,
    name: "jobs_plan_alignment",
    // Issue 31: a segment job with options.sync "auto" aligns once, in its plan; the pairing
    // (JSON; NULL for any other job) is handed to every segment's node.
    sql: "ALTER TABLE jobs ADD COLUMN plan_alignment TEXT;"
  },
  {
    version: 10,
    name: "job_segments_memory_need",
    // Issue 27: a segment handed back for want of free memory keeps its node's estimate of what it
    // needs (decoders and scorer); claims skip the segment for nodes with less free, as they skip
    // jobs by jobs.memory_need. NULL: not known.
    sql: "ALTER TABLE job_segments ADD COLUMN memory_need INTEGER;"
  }
]

const LEDGER = `
  CREATE TABLE IF NOT EXISTS schema_migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT    NOT NULL,
    applied_at INTEGER NOT NULL
  )`

/** Applies the missing migrations; returns the versions it applied. Throws on a newer schema. */
export const migrate = (db: Database, migrations: ReadonlyArray<Migration>, now: number): ReadonlyArray<number> => {
  db.run(LEDGER)
  const latest = migrations.reduce((max, migration) => Math.max(max, migration.version), 0)
  const appliedVersion = db.query<{ version: number | null }, []>(
    "SELECT max(version) AS version FROM schema_migrations"
  )
  const found = appliedVersion.get()?.version ?? 0
  if (found > latest) {
    throw new Error(
      `the store has schema version ${found}, newer than this controller's ${latest}; run a newer controller`
    )
  }
  const isApplied = db.query<{ one: number }, [number]>("SELECT 1 AS one FROM schema_migrations WHERE version = ?")
  const record = db.query<never, [number, string, number]>(
    "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)"
  )
  const applied: Array<number> = []
  for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
    const apply = db.transaction(() => {
      // Checked again inside the write lock: another process may have applied it meanwhile.
      if (isApplied.get(migration.version) !== null) return false
      db.run(migration.sql)
      record.run(migration.version, migration.name, now)
      return true
    })
    if (apply.immediate()) applied.push(migration.version)
  }
  return applied
}
