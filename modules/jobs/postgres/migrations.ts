/**
 * Versioned schema migrations of the PostgreSQL job store, applied at start-up inside one
 * transaction that first takes a transaction-level advisory lock: replicas starting together
 * queue on the lock, and the second finds everything applied. This is the store's only
 * multi-statement transaction; it runs at start-up, before the pool serves anything. A database whose schema is newer
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

/** Channel of the change notifications: lines of JSON `[tenant, id, state, fence]` (migration 8). */
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
  {
    version: 6,
    name: "row-level security on node_sessions",
    // Every tenant table behind the same wall as jobs (v2): a node session is seen by its own
    // tenant's transactions, and by the maintenance ones (the session lookup that tells another
    // tenant's session from an unknown one, the outage bridge, the prune). sweep_lease and
    // controller_clock hold no tenant's data.
    sql: `
      ALTER TABLE node_sessions ENABLE ROW LEVEL SECURITY;
      ALTER TABLE node_sessions FORCE ROW LEVEL SECURITY;
      CREATE POLICY node_sessions_tenant ON node_sessions
        USING (
          current_setting('svc.maintenance', true) = 'on'
          OR (tenant_id <> '' AND tenant_id = current_setting('svc.tenant', true))
        )
        WITH CHECK (
          current_setting('svc.maintenance', true) = 'on'
          OR (tenant_id <> '' AND tenant_id = current_setting('svc.tenant', true))
        );
    `
  },
  {
    version: 7,
    name: "job_segments",
    // Segment jobs (issue 30): the SQLite store's migration 7, with row-level security like
    // jobs (the same policy; postgres/segments.ts).
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
  },
  {
    version: 8,
    name: "one statement per operation, notifications only while listened",
    // Issue 35. (6 and 7 belong to other work; migratePostgres applies every version missing
    // from the ledger, so the gap is harmless.) Each store operation becomes one call of a
    // function that sets the tenant for row-level security and runs the statement (one round
    // trip, no BEGIN/COMMIT, no transaction the client could leave open on a shared
    // connection); a claim checks the node's session in the same call and a report reads the
    // reporter's and owners' sessions with its jobs. `revision` grows at every report write: a
    // report is a compare-and-set on (lease, revision), so the row needs no lock held across
    // round trips. The row trigger (a NOTIFY per row, each looked up by every replica) becomes
    // statement-level triggers whose payload carries tenant, id, state and fence, sent only
    // while some replica has a row in change_listeners.
    sql: `
      ALTER TABLE jobs ADD COLUMN revision BIGINT NOT NULL DEFAULT 0;

      CREATE FUNCTION svc_enter(p_tenant TEXT, p_maintenance BOOLEAN) RETURNS VOID LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM set_config('svc.tenant', p_tenant, true),
                set_config('svc.maintenance', CASE WHEN p_maintenance THEN 'on' ELSE 'off' END, true);
      END $$;

      -- Segments (migration 7) read with every job: the named jobs' segments of one tenant, and
      -- the sweep's running assignments, each one call (no BEGIN on the serving path).
      CREATE FUNCTION svc_segments_of(p_tenant TEXT, p_ids TEXT) RETURNS SETOF job_segments LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM svc_enter(p_tenant, false);
        RETURN QUERY SELECT * FROM job_segments WHERE tenant_id = p_tenant AND p_tenant <> ''
          AND job_id IN (SELECT jsonb_array_elements_text(p_ids::jsonb)) ORDER BY job_id, idx;
      END $$;

      CREATE FUNCTION svc_node_has_segments(p_tenant TEXT, p_node TEXT) RETURNS BOOLEAN LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM svc_enter(p_tenant, false);
        RETURN EXISTS (SELECT 1 FROM job_segments WHERE tenant_id = p_tenant AND p_tenant <> ''
          AND node_id = p_node AND state = 'running');
      END $$;

      CREATE FUNCTION svc_segments_cancel(p_tenant TEXT, p_job TEXT) RETURNS VOID LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM svc_enter(p_tenant, false);
        UPDATE job_segments SET state = 'cancelled' WHERE tenant_id = p_tenant AND p_tenant <> ''
          AND job_id = p_job AND state IN ('pending', 'running');
      END $$;

      CREATE FUNCTION svc_segment_assignments() RETURNS TABLE (tenant_id TEXT, node_id TEXT) LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM svc_enter('', true);
        RETURN QUERY SELECT DISTINCT s.tenant_id, s.node_id FROM job_segments s
          WHERE s.state = 'running' AND s.tenant_id <> '' AND s.node_id IS NOT NULL;
      END $$;

      -- Node sessions (row-level security of migration 6): a tenant's own calls see its own
      -- sessions; the session lookup (seed 000 §5.5.4 tells another tenant's session from an
      -- unknown one), the live list, the prune and the outage bridge run with maintenance rights.
      CREATE FUNCTION svc_session_register(p_tenant TEXT, p_node TEXT, p_name TEXT, p_slots INTEGER, p_version TEXT,
        p_now BIGINT, p_expires BIGINT) RETURNS VOID LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM svc_enter(p_tenant, false);
        INSERT INTO node_sessions (node_id, tenant_id, name, slots, version, registered_at, last_heartbeat, expires_at)
          VALUES (p_node, p_tenant, p_name, p_slots, p_version, p_now, p_now, p_expires);
      END $$;

      -- An expired session is not revived (its jobs may already be re-queued): false.
      CREATE FUNCTION svc_session_heartbeat(p_tenant TEXT, p_node TEXT, p_now BIGINT, p_expires BIGINT)
      RETURNS BOOLEAN LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM svc_enter(p_tenant, false);
        UPDATE node_sessions SET last_heartbeat = p_now, expires_at = p_expires
          WHERE node_id = p_node AND tenant_id = p_tenant AND expires_at > p_now;
        RETURN FOUND;
      END $$;

      CREATE FUNCTION svc_session_state(p_node TEXT) RETURNS SETOF node_sessions LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM svc_enter('', true);
        RETURN QUERY SELECT * FROM node_sessions WHERE node_id = p_node;
      END $$;

      CREATE FUNCTION svc_sessions_live(p_now BIGINT) RETURNS SETOF node_sessions LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM svc_enter('', true);
        RETURN QUERY SELECT * FROM node_sessions WHERE expires_at > p_now;
      END $$;

      CREATE FUNCTION svc_sessions_of_tenant(p_tenant TEXT) RETURNS SETOF node_sessions LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM svc_enter(p_tenant, false);
        RETURN QUERY SELECT * FROM node_sessions WHERE tenant_id = p_tenant;
      END $$;

      CREATE FUNCTION svc_sessions_prune(p_expired_before BIGINT) RETURNS VOID LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM svc_enter('', true);
        DELETE FROM node_sessions WHERE expires_at <= p_expired_before;
      END $$;

      -- A replica notes that it reached the database; when the previous note is more than
      -- p_threshold ms old, every session live at that note is extended by the gap (time when no
      -- heartbeat could be recorded). A concurrent note waits on the row lock, then finds the
      -- fresh note: the gap is bridged once.
      CREATE FUNCTION svc_clock_tick(p_now BIGINT, p_threshold BIGINT) RETURNS VOID LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM svc_enter('', true);
        WITH previous AS (
            SELECT c.last_seen FROM controller_clock c WHERE c.id = 1 AND c.last_seen < p_now FOR UPDATE),
          tick AS (
            UPDATE controller_clock SET last_seen = p_now FROM previous WHERE controller_clock.id = 1
            RETURNING previous.last_seen AS last_seen)
          UPDATE node_sessions SET expires_at = node_sessions.expires_at + (p_now - tick.last_seen)
          FROM tick WHERE tick.last_seen > 0 AND p_now - tick.last_seen > p_threshold
            AND node_sessions.expires_at > tick.last_seen;
      END $$;

      CREATE FUNCTION svc_insert(p_tenant TEXT, p_id TEXT, p_request TEXT, p_now BIGINT, p_by TEXT, p_key TEXT)
      RETURNS SETOF jobs LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM svc_enter(p_tenant, false);
        RETURN QUERY INSERT INTO jobs (id, tenant_id, state, request, created_at, submitted_by, idempotency_key)
          VALUES (p_id, p_tenant, 'pending', p_request, p_now, p_by, p_key)
          ON CONFLICT (tenant_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
          RETURNING *;
        IF NOT FOUND AND p_key IS NOT NULL THEN
          RETURN QUERY SELECT * FROM jobs WHERE tenant_id = p_tenant AND idempotency_key = p_key;
        END IF;
      END $$;

      CREATE FUNCTION svc_lookup(p_tenant TEXT, p_id TEXT) RETURNS SETOF jobs LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM svc_enter(p_tenant, false);
        RETURN QUERY SELECT * FROM jobs WHERE tenant_id = p_tenant AND p_tenant <> '' AND id = p_id;
      END $$;

      CREATE FUNCTION svc_other_tenant(p_tenant TEXT, p_id TEXT) RETURNS BOOLEAN LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM svc_enter('', true);
        RETURN EXISTS (SELECT 1 FROM jobs WHERE id = p_id AND tenant_id <> p_tenant);
      END $$;

      CREATE FUNCTION svc_list(p_tenant TEXT, p_states TEXT, p_limit INTEGER) RETURNS SETOF jobs LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM svc_enter(p_tenant, false);
        IF p_states = '' THEN
          RETURN QUERY SELECT * FROM jobs WHERE tenant_id = p_tenant AND p_tenant <> '' ORDER BY seq DESC LIMIT p_limit;
        ELSE
          RETURN QUERY SELECT * FROM jobs WHERE tenant_id = p_tenant AND p_tenant <> ''
            AND state = ANY (string_to_array(p_states, ',')) ORDER BY seq DESC LIMIT p_limit;
        END IF;
      END $$;

      CREATE FUNCTION svc_cancel(p_tenant TEXT, p_id TEXT, p_now BIGINT) RETURNS SETOF jobs LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM svc_enter(p_tenant, false);
        RETURN QUERY UPDATE jobs SET state = 'cancelled', finished_at = p_now
          WHERE tenant_id = p_tenant AND p_tenant <> '' AND id = p_id AND state IN ('pending', 'running')
          RETURNING *;
      END $$;

      -- The node's session decides first: another tenant's, unknown or expired claims nothing. One
      -- row describes the session (job NULL), then one row per claimed job.
      CREATE FUNCTION svc_claim(p_tenant TEXT, p_node TEXT, p_now BIGINT, p_max INTEGER, p_check BOOLEAN DEFAULT true)
      RETURNS TABLE (session_tenant TEXT, session_expires BIGINT, job JSON) LANGUAGE plpgsql AS $$
      DECLARE
        s_tenant TEXT;
        s_expires BIGINT;
      BEGIN
        -- The session is looked up across tenants (to tell another tenant's from an unknown one),
        -- so under maintenance should node_sessions get row-level security too.
        PERFORM svc_enter('', true);
        SELECT ns.tenant_id, ns.expires_at INTO s_tenant, s_expires FROM node_sessions ns WHERE ns.node_id = p_node;
        RETURN QUERY SELECT s_tenant, s_expires, NULL::JSON;
        IF p_check AND (s_tenant IS DISTINCT FROM p_tenant OR s_expires <= p_now) THEN
          RETURN;
        END IF;
        PERFORM svc_enter(p_tenant, false);
        RETURN QUERY WITH picked AS (
            SELECT j.seq FROM jobs j WHERE j.tenant_id = p_tenant AND p_tenant <> '' AND j.state = 'pending'
            ORDER BY j.seq LIMIT p_max FOR UPDATE SKIP LOCKED),
          claimed AS (
            UPDATE jobs SET state = 'running', node_id = p_node, started_at = p_now, fence = jobs.fence + 1
            FROM picked WHERE jobs.seq = picked.seq AND jobs.tenant_id = p_tenant
            RETURNING jobs.*)
          SELECT NULL::TEXT, NULL::BIGINT, row_to_json(claimed) FROM claimed ORDER BY claimed.seq;
      END $$;

      -- A report's read: one row for the reporting session (job NULL), then the named jobs of the
      -- tenant, each with the expiry of its node's session (NULL: none).
      CREATE FUNCTION svc_report_read(p_tenant TEXT, p_ids TEXT, p_reporter TEXT)
      RETURNS TABLE (session_tenant TEXT, session_expires BIGINT, job JSON) LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM svc_enter('', true);
        RETURN QUERY SELECT ns.tenant_id, ns.expires_at, NULL::JSON FROM (SELECT 1) AS one
          LEFT JOIN node_sessions ns ON ns.node_id = p_reporter;
        PERFORM svc_enter(p_tenant, false);
        RETURN QUERY SELECT NULL::TEXT, owner.expires_at, row_to_json(j)
          FROM jobs j LEFT JOIN node_sessions owner ON owner.node_id = j.node_id
          WHERE j.tenant_id = p_tenant AND p_tenant <> ''
            AND j.id IN (SELECT jsonb_array_elements_text(p_ids::jsonb));
      END $$;

      -- Reports' writes, each a compare-and-set on the lease and revision it was decided on: a row
      -- changed since the read is not written (the caller reads and decides again).
      CREATE FUNCTION svc_report_write(p_tenant TEXT, p_updates TEXT, p_now BIGINT) RETURNS SETOF jobs LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM svc_enter(p_tenant, false);
        RETURN QUERY UPDATE jobs SET node_id = u.node_id, result = coalesce(u.result, jobs.result),
            frames_done = u.frames_done, rendition_progress = u.rendition_progress,
            state = coalesce(u.state, jobs.state),
            error = CASE WHEN u.state IS NULL THEN jobs.error ELSE u.error END,
            finished_at = CASE WHEN u.state IS NULL THEN jobs.finished_at ELSE p_now END,
            fence = CASE WHEN u.node_id = u.expected_node THEN jobs.fence ELSE jobs.fence + 1 END,
            revision = jobs.revision + 1
          FROM jsonb_to_recordset(p_updates::jsonb) AS u (id TEXT, expected_node TEXT, expected_fence BIGINT,
            expected_revision BIGINT, node_id TEXT, result TEXT, frames_done BIGINT, rendition_progress TEXT,
            state TEXT, error TEXT)
          WHERE jobs.tenant_id = p_tenant AND p_tenant <> '' AND jobs.id = u.id AND jobs.state = 'running'
            AND jobs.node_id = u.expected_node AND jobs.fence = u.expected_fence AND jobs.revision = u.expected_revision
          RETURNING jobs.*;
      END $$;

      CREATE FUNCTION svc_requeue(p_tenant TEXT, p_node TEXT, p_before BIGINT, p_listed TEXT) RETURNS SETOF jobs
      LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM svc_enter(p_tenant, false);
        RETURN QUERY UPDATE jobs SET state = 'pending', node_id = NULL, started_at = NULL, result = NULL,
            frames_done = 0, rendition_progress = NULL, fence = fence + 1
          WHERE tenant_id = p_tenant AND p_tenant <> '' AND node_id = p_node AND state = 'running'
            AND (p_before IS NULL OR (started_at < p_before
              AND id NOT IN (SELECT jsonb_array_elements_text(p_listed::jsonb))))
          RETURNING *;
      END $$;

      CREATE FUNCTION svc_running_assignments() RETURNS TABLE (tenant_id TEXT, node_id TEXT) LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM svc_enter('', true);
        RETURN QUERY SELECT DISTINCT j.tenant_id, j.node_id FROM jobs j
          WHERE j.state = 'running' AND j.tenant_id <> '' AND j.node_id IS NOT NULL;
      END $$;

      CREATE FUNCTION svc_count_by_state() RETURNS TABLE (state TEXT, n BIGINT) LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM svc_enter('', true);
        RETURN QUERY SELECT j.state, count(*) FROM jobs j WHERE j.tenant_id <> '' GROUP BY j.state;
      END $$;

      -- Replicas that want change notifications (followers or waiting PullWork calls); a row lapses
      -- when its replica stops refreshing it.
      CREATE TABLE change_listeners (
        replica    TEXT        PRIMARY KEY,
        expires_at TIMESTAMPTZ NOT NULL
      );

      -- One statement, one notification per 7,000 bytes of changed rows: lines of JSON
      -- [tenant, id, state, fence]; nothing at all while no replica listens.
      CREATE FUNCTION svc_jobs_notify_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        payload TEXT := '';
        entry TEXT;
      BEGIN
        IF NOT EXISTS (SELECT 1 FROM change_listeners WHERE expires_at > now()) THEN
          RETURN NULL;
        END IF;
        FOR entry IN SELECT json_build_array(c.tenant_id, c.id, c.state, c.fence)::TEXT FROM changed c ORDER BY c.seq LOOP
          IF octet_length(payload) + octet_length(entry) > 7000 THEN
            PERFORM pg_notify('${CHANGE_CHANNEL}', payload);
            payload := '';
          END IF;
          payload := payload || entry || E'\\n';
        END LOOP;
        IF payload <> '' THEN
          PERFORM pg_notify('${CHANGE_CHANNEL}', payload);
        END IF;
        RETURN NULL;
      END $$;
      DROP TRIGGER jobs_notify ON jobs;
      DROP FUNCTION svc_jobs_notify();
      CREATE TRIGGER jobs_notify_insert AFTER INSERT ON jobs REFERENCING NEW TABLE AS changed
        FOR EACH STATEMENT EXECUTE FUNCTION svc_jobs_notify_changed();
      CREATE TRIGGER jobs_notify_update AFTER UPDATE ON jobs REFERENCING NEW TABLE AS changed
        FOR EACH STATEMENT EXECUTE FUNCTION svc_jobs_notify_changed();
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
    const ledger = await tx<Array<{ version: number }>>`SELECT version FROM schema_migrations`
    const done = new Set(ledger.map((row) => Number(row.version)))
    const found = Math.max(0, ...done)
    const latest = migrations.reduce((max, migration) => Math.max(max, migration.version), 0)
    if (found > latest) {
      throw new Error(
        `the store has schema version ${found}, newer than this controller's ${latest}; run a newer controller`
      )
    }
    const applied: Array<number> = []
    for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
      // By the ledger, not the highest version: numbers taken by work merged later still apply.
      if (done.has(migration.version)) continue
      await tx.unsafe(migration.sql)
      await tx`INSERT INTO schema_migrations (version, name, applied_at)
        VALUES (${migration.version}, ${migration.name}, ${now})`
      applied.push(migration.version)
    }
    return applied
  })
