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
  },
  {
    version: 9,
    name: "segment jobs without BEGIN, segment capability in the session",
    // Issue 35 for segment jobs (issue 30). A segment job's claim, plan, report and re-queue
    // become function calls like migration 8's: no transaction the client opens. Every write of
    // a job's segments first locks the job row (within its one statement), so writes of one job
    // run one after another and never deadlock. A segment report is a compare-and-set on the
    // segment's lease and `revision`, decided on a read of the same shape as a job's report; the
    // last segment's report writes the merged result with it (the caller merges first), so
    // the job never rests with every segment finished and no result. `scores_segments` moves the
    // node's RegisterNode capability into its session row, where every replica sees it. Segments
    // that become pending (a plan, a re-queue) notify `[tenant, job, "segments", count]`, so
    // waiting PullWork calls on every replica wake.
    sql: `
      ALTER TABLE node_sessions ADD COLUMN scores_segments BOOLEAN NOT NULL DEFAULT false;
      ALTER TABLE job_segments ADD COLUMN revision BIGINT NOT NULL DEFAULT 0;

      DROP FUNCTION svc_session_register(TEXT, TEXT, TEXT, INTEGER, TEXT, BIGINT, BIGINT);
      CREATE FUNCTION svc_session_register(p_tenant TEXT, p_node TEXT, p_name TEXT, p_slots INTEGER, p_version TEXT,
        p_now BIGINT, p_expires BIGINT, p_segments BOOLEAN) RETURNS VOID LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM svc_enter(p_tenant, false);
        INSERT INTO node_sessions (node_id, tenant_id, name, slots, version, registered_at, last_heartbeat, expires_at,
            scores_segments)
          VALUES (p_node, p_tenant, p_name, p_slots, p_version, p_now, p_now, p_expires, p_segments);
      END $$;

      -- A job's segments as JSON, without their results (those can be large; merges read them).
      CREATE FUNCTION svc_segments_json(p_tenant TEXT, p_job TEXT) RETURNS JSON LANGUAGE sql STABLE AS $$
        SELECT coalesce(json_agg(json_build_object('job_id', s.job_id, 'idx', s.idx, 'first_frame', s.first_frame,
            'frame_count', s.frame_count, 'state', s.state, 'node_id', s.node_id, 'fence', s.fence,
            'attempts', s.attempts, 'claimed_at', s.claimed_at, 'frames_done', s.frames_done, 'error', s.error,
            'revision', s.revision) ORDER BY s.idx), '[]'::json)
        FROM job_segments s WHERE s.tenant_id = p_tenant AND p_tenant <> '' AND s.job_id = p_job
      $$;

      -- A claim that checks the session and, for a node that scores segments, claims fairly within
      -- the tenant (each pick: the pending job or the next pending segment of the job with the
      -- fewest units running, ties to the oldest). One row for the session, then one per unit.
      CREATE FUNCTION svc_claim_units(p_tenant TEXT, p_node TEXT, p_now BIGINT, p_max INTEGER, p_check BOOLEAN)
      RETURNS TABLE (session_tenant TEXT, session_expires BIGINT, scores_segments BOOLEAN, job JSON, segment JSON,
        segments JSON) LANGUAGE plpgsql AS $$
      DECLARE
        s_tenant TEXT;
        s_expires BIGINT;
        s_segments BOOLEAN;
        c_seq BIGINT[];
        c_id TEXT[];
        c_pending BOOLEAN[];
        c_busy INTEGER[];
        c_live BOOLEAN[];
        best INTEGER;
        claimed INTEGER := 0;
        held jobs;
        got job_segments;
      BEGIN
        PERFORM svc_enter('', true);
        SELECT ns.tenant_id, ns.expires_at, ns.scores_segments INTO s_tenant, s_expires, s_segments
          FROM node_sessions ns WHERE ns.node_id = p_node;
        RETURN QUERY SELECT s_tenant, s_expires, coalesce(s_segments, false), NULL::JSON, NULL::JSON, NULL::JSON;
        IF p_check AND (s_tenant IS DISTINCT FROM p_tenant OR s_expires <= p_now) THEN
          RETURN;
        END IF;
        PERFORM svc_enter(p_tenant, false);
        -- Unchecked (the caller checked the session and asks for segment units) or a capable node.
        IF p_check AND NOT coalesce(s_segments, false) THEN
          RETURN QUERY WITH picked AS (
              SELECT j.seq FROM jobs j WHERE j.tenant_id = p_tenant AND p_tenant <> '' AND j.state = 'pending'
              ORDER BY j.seq LIMIT p_max FOR UPDATE SKIP LOCKED),
            claimed_jobs AS (
              UPDATE jobs SET state = 'running', node_id = p_node, started_at = p_now, fence = jobs.fence + 1
              FROM picked WHERE jobs.seq = picked.seq AND jobs.tenant_id = p_tenant
              RETURNING jobs.*)
            SELECT NULL::TEXT, NULL::BIGINT, NULL::BOOLEAN, row_to_json(c), NULL::JSON, '[]'::JSON
            FROM claimed_jobs c ORDER BY c.seq;
          RETURN;
        END IF;
        -- Candidates: the oldest pending jobs (at most p_max can be picked; locked, others skip
        -- them) and running jobs with a pending segment, each with its units running.
        SELECT array_agg(x.seq ORDER BY x.seq), array_agg(x.id ORDER BY x.seq)
          INTO c_seq, c_id
          FROM (SELECT j.seq, j.id FROM jobs j WHERE j.tenant_id = p_tenant AND p_tenant <> '' AND j.state = 'pending'
            ORDER BY j.seq LIMIT p_max FOR UPDATE SKIP LOCKED) AS x;
        c_pending := array_fill(true, ARRAY[coalesce(cardinality(c_seq), 0)]);
        c_busy := array_fill(0, ARRAY[coalesce(cardinality(c_seq), 0)]);
        SELECT c_seq || array_agg(x.seq ORDER BY x.seq), c_id || array_agg(x.id ORDER BY x.seq),
            c_pending || array_agg(false), c_busy || array_agg(x.busy ORDER BY x.seq)
          INTO c_seq, c_id, c_pending, c_busy
          FROM (SELECT j.seq, j.id,
              (SELECT count(*)::INTEGER FROM job_segments r
                WHERE r.tenant_id = p_tenant AND r.job_id = j.id AND r.state = 'running') AS busy
            FROM jobs j WHERE j.tenant_id = p_tenant AND p_tenant <> '' AND j.state = 'running'
              AND EXISTS (SELECT 1 FROM job_segments p
                WHERE p.tenant_id = p_tenant AND p.job_id = j.id AND p.state = 'pending')
            ORDER BY j.seq LIMIT greatest(64, p_max * 4)) AS x;
        IF coalesce(cardinality(c_seq), 0) = 0 THEN
          RETURN;
        END IF;
        c_live := array_fill(true, ARRAY[cardinality(c_seq)]);
        WHILE claimed < p_max LOOP
          best := NULL;
          FOR i IN 1 .. cardinality(c_seq) LOOP
            IF c_live[i] AND (best IS NULL OR c_busy[i] < c_busy[best]
                OR (c_busy[i] = c_busy[best] AND c_seq[i] < c_seq[best])) THEN
              best := i;
            END IF;
          END LOOP;
          EXIT WHEN best IS NULL;
          IF c_pending[best] THEN
            c_live[best] := false;
            UPDATE jobs SET state = 'running', node_id = p_node, started_at = p_now, fence = jobs.fence + 1
              WHERE jobs.tenant_id = p_tenant AND jobs.id = c_id[best] AND jobs.state = 'pending' RETURNING * INTO held;
            IF FOUND THEN
              claimed := claimed + 1;
              RETURN QUERY SELECT NULL::TEXT, NULL::BIGINT, NULL::BOOLEAN, row_to_json(held), NULL::JSON,
                svc_segments_json(p_tenant, held.id);
            END IF;
            CONTINUE;
          END IF;
          -- The job row first (a writer of its segments holds it: skip the job for now).
          PERFORM 1 FROM jobs WHERE jobs.tenant_id = p_tenant AND jobs.id = c_id[best] AND jobs.state = 'running'
            FOR UPDATE SKIP LOCKED;
          IF NOT FOUND THEN
            c_live[best] := false;
            CONTINUE;
          END IF;
          UPDATE job_segments SET state = 'running', node_id = p_node, claimed_at = p_now, fence = job_segments.fence + 1,
              attempts = job_segments.attempts + 1, frames_done = 0, result = NULL, revision = job_segments.revision + 1
            WHERE job_segments.tenant_id = p_tenant AND job_segments.job_id = c_id[best] AND job_segments.idx = (
              SELECT p.idx FROM job_segments p WHERE p.tenant_id = p_tenant AND p.job_id = c_id[best]
                AND p.state = 'pending' ORDER BY p.idx LIMIT 1 FOR UPDATE SKIP LOCKED)
            RETURNING * INTO got;
          IF NOT FOUND THEN
            c_live[best] := false;
            CONTINUE;
          END IF;
          UPDATE jobs SET started_at = coalesce(jobs.started_at, p_now)
            WHERE jobs.tenant_id = p_tenant AND jobs.id = c_id[best] RETURNING * INTO held;
          c_busy[best] := c_busy[best] + 1;
          claimed := claimed + 1;
          RETURN QUERY SELECT NULL::TEXT, NULL::BIGINT, NULL::BOOLEAN, row_to_json(held), row_to_json(got),
            svc_segments_json(p_tenant, held.id);
        END LOOP;
      END $$;

      -- What a plan or a segment's report is decided on, one row: the reporter's session, the job
      -- (with its revision) and its node's session expiry, its segments, and segment p_index's
      -- stored result, revision and node's session expiry.
      CREATE FUNCTION svc_segment_read(p_tenant TEXT, p_job TEXT, p_reporter TEXT, p_index INTEGER)
      RETURNS TABLE (reporter_tenant TEXT, reporter_expires BIGINT, job JSON, owner_expires BIGINT, segments JSON,
        segment_result TEXT, segment_revision BIGINT, segment_owner_expires BIGINT) LANGUAGE plpgsql AS $$
      DECLARE
        r_tenant TEXT;
        r_expires BIGINT;
      BEGIN
        PERFORM svc_enter('', true);
        SELECT ns.tenant_id, ns.expires_at INTO r_tenant, r_expires FROM node_sessions ns WHERE ns.node_id = p_reporter;
        PERFORM svc_enter(p_tenant, false);
        RETURN QUERY SELECT r_tenant, r_expires, row_to_json(j), owner.expires_at, svc_segments_json(p_tenant, p_job),
            s.result, s.revision, s_owner.expires_at
          FROM (SELECT 1) AS one
          LEFT JOIN jobs j ON j.tenant_id = p_tenant AND p_tenant <> '' AND j.id = p_job
          LEFT JOIN node_sessions owner ON owner.node_id = j.node_id
          LEFT JOIN job_segments s ON s.tenant_id = p_tenant AND s.job_id = p_job AND s.idx = p_index
          LEFT JOIN node_sessions s_owner ON s_owner.node_id = s.node_id;
      END $$;

      -- The results of a job's finished segments but p_index, in order (the merge's input).
      CREATE FUNCTION svc_segment_results(p_tenant TEXT, p_job TEXT, p_index INTEGER)
      RETURNS TABLE (idx INTEGER, state TEXT, result TEXT) LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM svc_enter(p_tenant, false);
        RETURN QUERY SELECT s.idx, s.state, s.result FROM job_segments s
          WHERE s.tenant_id = p_tenant AND p_tenant <> '' AND s.job_id = p_job AND s.idx <> p_index ORDER BY s.idx;
      END $$;

      -- A plan: the job handed out to be planned (compare-and-set on its lease and revision, not yet
      -- planned) keeps running without a node, and its segments are written pending.
      CREATE FUNCTION svc_segment_plan(p_tenant TEXT, p_job TEXT, p_node TEXT, p_fence BIGINT, p_revision BIGINT,
        p_cuts TEXT) RETURNS TABLE (job JSON, segments JSON) LANGUAGE plpgsql AS $$
      DECLARE
        held jobs;
      BEGIN
        PERFORM svc_enter(p_tenant, false);
        UPDATE jobs SET node_id = NULL, fence = jobs.fence + 1, frames_done = 0, result = NULL,
            revision = jobs.revision + 1
          WHERE jobs.tenant_id = p_tenant AND p_tenant <> '' AND jobs.id = p_job AND jobs.state = 'running'
            AND jobs.node_id = p_node AND jobs.fence = p_fence AND jobs.revision = p_revision
            AND NOT EXISTS (SELECT 1 FROM job_segments s WHERE s.tenant_id = p_tenant AND s.job_id = p_job)
          RETURNING * INTO held;
        IF NOT FOUND THEN
          RETURN;
        END IF;
        INSERT INTO job_segments (tenant_id, job_id, idx, first_frame, frame_count, state)
          SELECT p_tenant, p_job, (c.n - 1)::INTEGER, (c.cut ->> 'first_frame')::BIGINT, (c.cut ->> 'frame_count')::BIGINT,
            'pending'
          FROM jsonb_array_elements(p_cuts::jsonb) WITH ORDINALITY AS c (cut, n);
        RETURN QUERY SELECT row_to_json(held), svc_segments_json(p_tenant, p_job);
      END $$;

      -- Ends a running segment job: failed (its unfinished segments cancelled) or finished.
      CREATE FUNCTION svc_segment_end(p_tenant TEXT, p_job TEXT, p_state TEXT, p_result TEXT, p_error TEXT,
        p_now BIGINT) RETURNS VOID LANGUAGE plpgsql AS $$
      BEGIN
        IF p_state = 'failed' THEN
          UPDATE job_segments SET state = 'cancelled' WHERE tenant_id = p_tenant AND job_id = p_job
            AND state IN ('pending', 'running');
        END IF;
        UPDATE jobs SET state = p_state, result = coalesce(p_result, jobs.result), error = p_error,
            frames_done = (SELECT coalesce(sum(s.frames_done), 0) FROM job_segments s
              WHERE s.tenant_id = p_tenant AND s.job_id = p_job),
            finished_at = p_now
          WHERE jobs.tenant_id = p_tenant AND jobs.id = p_job AND jobs.state = 'running';
      END $$;

      -- A segment's report, decided on svc_segment_read's row: a compare-and-set on the segment's
      -- lease and revision (nothing written: no row, the caller reads and decides again). A failed
      -- segment fails the job; a progress report sums the frames; the last segment's final report
      -- needs the merged job's outcome (p_end: {state, result, error}): without it, nothing is
      -- written and the status is 'merge' (the caller reads the results, merges, and calls again).
      CREATE FUNCTION svc_segment_write(p_tenant TEXT, p_job TEXT, p_index INTEGER, p_update TEXT, p_end TEXT,
        p_now BIGINT) RETURNS TABLE (status TEXT, job JSON, segments JSON) LANGUAGE plpgsql AS $$
      DECLARE
        u RECORD;
        e RECORD;
        unfinished INTEGER;
      BEGIN
        PERFORM svc_enter(p_tenant, false);
        PERFORM 1 FROM jobs WHERE jobs.tenant_id = p_tenant AND p_tenant <> '' AND jobs.id = p_job FOR UPDATE;
        IF NOT FOUND THEN
          RETURN;
        END IF;
        SELECT * INTO u FROM jsonb_to_record(p_update::jsonb) AS x (expected_node TEXT, expected_fence BIGINT,
          expected_revision BIGINT, node_id TEXT, result TEXT, frames_done BIGINT, state TEXT, error TEXT);
        SELECT count(*) INTO unfinished FROM job_segments s WHERE s.tenant_id = p_tenant AND s.job_id = p_job
          AND s.idx <> p_index AND s.state <> 'finished';
        IF u.state = 'finished' AND unfinished = 0 AND p_end IS NULL THEN
          RETURN QUERY SELECT 'merge'::TEXT, NULL::JSON, NULL::JSON;
          RETURN;
        END IF;
        UPDATE job_segments SET node_id = u.node_id, result = coalesce(u.result, job_segments.result),
            frames_done = u.frames_done, state = coalesce(u.state, job_segments.state), error = u.error,
            fence = CASE WHEN u.node_id = u.expected_node THEN job_segments.fence ELSE job_segments.fence + 1 END,
            revision = job_segments.revision + 1
          WHERE job_segments.tenant_id = p_tenant AND job_segments.job_id = p_job AND job_segments.idx = p_index
            AND job_segments.state = 'running' AND job_segments.node_id = u.expected_node
            AND job_segments.fence = u.expected_fence AND job_segments.revision = u.expected_revision;
        IF NOT FOUND THEN
          RETURN;
        END IF;
        IF u.state = 'failed' THEN
          PERFORM svc_segment_end(p_tenant, p_job, 'failed', NULL, 'segment ' || p_index || ': ' || coalesce(u.error, 'failed'),
            p_now);
        ELSIF u.state = 'finished' AND unfinished = 0 THEN
          SELECT * INTO e FROM jsonb_to_record(p_end::jsonb) AS x (state TEXT, result TEXT, error TEXT);
          PERFORM svc_segment_end(p_tenant, p_job, e.state, e.result, e.error, p_now);
        ELSE
          UPDATE jobs SET frames_done = (SELECT coalesce(sum(s.frames_done), 0) FROM job_segments s
              WHERE s.tenant_id = p_tenant AND s.job_id = p_job)
            WHERE jobs.tenant_id = p_tenant AND jobs.id = p_job AND jobs.state = 'running';
        END IF;
        RETURN QUERY SELECT 'written'::TEXT, row_to_json(j), svc_segments_json(p_tenant, p_job)
          FROM jobs j WHERE j.tenant_id = p_tenant AND j.id = p_job;
      END $$;

      -- A lost node's running segments (all, or those claimed before p_before and not listed by
      -- the node): back to pending, or the job failed once a segment was handed out p_max_attempts
      -- times. Returns the jobs changed.
      CREATE FUNCTION svc_segments_requeue(p_tenant TEXT, p_node TEXT, p_before BIGINT, p_listed TEXT, p_now BIGINT,
        p_max_attempts INTEGER) RETURNS SETOF TEXT LANGUAGE plpgsql AS $$
      DECLARE
        lost RECORD;
      BEGIN
        PERFORM svc_enter(p_tenant, false);
        FOR lost IN SELECT s.job_id, s.idx, s.attempts FROM job_segments s
            WHERE s.tenant_id = p_tenant AND p_tenant <> '' AND s.node_id = p_node AND s.state = 'running'
              AND (p_before IS NULL OR (coalesce(s.claimed_at, 0) < p_before
                AND s.job_id NOT IN (SELECT jsonb_array_elements_text(p_listed::jsonb))))
            ORDER BY s.job_id, s.idx LOOP
          PERFORM 1 FROM jobs WHERE jobs.tenant_id = p_tenant AND jobs.id = lost.job_id FOR UPDATE;
          IF lost.attempts >= p_max_attempts THEN
            PERFORM svc_segment_end(p_tenant, lost.job_id, 'failed', NULL, 'segment ' || lost.idx
              || ' was lost with its node ' || lost.attempts || ' times (at most ' || p_max_attempts || ' attempts)', p_now);
          ELSE
            UPDATE job_segments SET state = 'pending', node_id = NULL, claimed_at = NULL, result = NULL, frames_done = 0,
                fence = job_segments.fence + 1, revision = job_segments.revision + 1
              WHERE job_segments.tenant_id = p_tenant AND job_segments.job_id = lost.job_id
                AND job_segments.idx = lost.idx AND job_segments.state = 'running' AND job_segments.node_id = p_node;
            UPDATE jobs SET frames_done = (SELECT coalesce(sum(s.frames_done), 0) FROM job_segments s
                WHERE s.tenant_id = p_tenant AND s.job_id = lost.job_id)
              WHERE jobs.tenant_id = p_tenant AND jobs.id = lost.job_id AND jobs.state = 'running';
          END IF;
          RETURN NEXT lost.job_id;
        END LOOP;
      END $$;

      -- Segments that became pending (a plan, a re-queue) wake waiting PullWork calls on every
      -- replica: lines [tenant, job, "segments", count], only while some replica listens.
      CREATE FUNCTION svc_segments_notify_pending() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        payload TEXT := '';
        entry TEXT;
      BEGIN
        IF NOT EXISTS (SELECT 1 FROM change_listeners WHERE expires_at > now()) THEN
          RETURN NULL;
        END IF;
        FOR entry IN SELECT json_build_array(c.tenant_id, c.job_id, 'segments', count(*))::TEXT FROM changed c
            WHERE c.state = 'pending' GROUP BY c.tenant_id, c.job_id ORDER BY c.job_id LOOP
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
      CREATE TRIGGER job_segments_notify_insert AFTER INSERT ON job_segments REFERENCING NEW TABLE AS changed
        FOR EACH STATEMENT EXECUTE FUNCTION svc_segments_notify_pending();
      CREATE TRIGGER job_segments_notify_update AFTER UPDATE ON job_segments REFERENCING NEW TABLE AS changed
        FOR EACH STATEMENT EXECUTE FUNCTION svc_segments_notify_pending();
    `
  },
  {
    version: 10,
    name: "job memory need, claims that skip what does not fit",
    // Issue 27: the memory a node estimated a job needs (decoders and scorer) when it handed the
    // job back for want of free memory (NULL: not known). The re-queue records it, and the claims
    // take the puller's free memory and whole budget: a job whose need exceeds the free memory is
    // skipped, unless it exceeds the whole budget too (that node fails it with the reason). Same
    // functions as migrations 8 and 9 otherwise: one call each, no BEGIN; row-level security as it is.
    sql: `
      ALTER TABLE jobs ADD COLUMN memory_need BIGINT;

      DROP FUNCTION svc_claim(TEXT, TEXT, BIGINT, INTEGER, BOOLEAN);
      CREATE FUNCTION svc_claim(p_tenant TEXT, p_node TEXT, p_now BIGINT, p_max INTEGER, p_check BOOLEAN,
        p_free BIGINT, p_budget BIGINT)
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
              AND (p_free <= 0 OR j.memory_need IS NULL OR j.memory_need <= p_free OR (p_budget > 0 AND j.memory_need > p_budget))
            ORDER BY j.seq LIMIT p_max FOR UPDATE SKIP LOCKED),
          claimed AS (
            UPDATE jobs SET state = 'running', node_id = p_node, started_at = p_now, fence = jobs.fence + 1
            FROM picked WHERE jobs.seq = picked.seq AND jobs.tenant_id = p_tenant
            RETURNING jobs.*)
          SELECT NULL::TEXT, NULL::BIGINT, row_to_json(claimed) FROM claimed ORDER BY claimed.seq;
      END $$;

      DROP FUNCTION svc_claim_units(TEXT, TEXT, BIGINT, INTEGER, BOOLEAN);
      CREATE FUNCTION svc_claim_units(p_tenant TEXT, p_node TEXT, p_now BIGINT, p_max INTEGER, p_check BOOLEAN,
        p_free BIGINT, p_budget BIGINT)
      RETURNS TABLE (session_tenant TEXT, session_expires BIGINT, scores_segments BOOLEAN, job JSON, segment JSON,
        segments JSON) LANGUAGE plpgsql AS $$
      DECLARE
        s_tenant TEXT;
        s_expires BIGINT;
        s_segments BOOLEAN;
        c_seq BIGINT[];
        c_id TEXT[];
        c_pending BOOLEAN[];
        c_busy INTEGER[];
        c_live BOOLEAN[];
        best INTEGER;
        claimed INTEGER := 0;
        held jobs;
        got job_segments;
      BEGIN
        PERFORM svc_enter('', true);
        SELECT ns.tenant_id, ns.expires_at, ns.scores_segments INTO s_tenant, s_expires, s_segments
          FROM node_sessions ns WHERE ns.node_id = p_node;
        RETURN QUERY SELECT s_tenant, s_expires, coalesce(s_segments, false), NULL::JSON, NULL::JSON, NULL::JSON;
        IF p_check AND (s_tenant IS DISTINCT FROM p_tenant OR s_expires <= p_now) THEN
          RETURN;
        END IF;
        PERFORM svc_enter(p_tenant, false);
        -- Unchecked (the caller checked the session and asks for segment units) or a capable node.
        IF p_check AND NOT coalesce(s_segments, false) THEN
          RETURN QUERY WITH picked AS (
              SELECT j.seq FROM jobs j WHERE j.tenant_id = p_tenant AND p_tenant <> '' AND j.state = 'pending'
                AND (p_free <= 0 OR j.memory_need IS NULL OR j.memory_need <= p_free OR (p_budget > 0 AND j.memory_need > p_budget))
              ORDER BY j.seq LIMIT p_max FOR UPDATE SKIP LOCKED),
            claimed_jobs AS (
              UPDATE jobs SET state = 'running', node_id = p_node, started_at = p_now, fence = jobs.fence + 1
              FROM picked WHERE jobs.seq = picked.seq AND jobs.tenant_id = p_tenant
              RETURNING jobs.*)
            SELECT NULL::TEXT, NULL::BIGINT, NULL::BOOLEAN, row_to_json(c), NULL::JSON, '[]'::JSON
            FROM claimed_jobs c ORDER BY c.seq;
          RETURN;
        END IF;
        -- Candidates: the oldest pending jobs (at most p_max can be picked; locked, others skip
        -- them) and running jobs with a pending segment, each with its units running.
        SELECT array_agg(x.seq ORDER BY x.seq), array_agg(x.id ORDER BY x.seq)
          INTO c_seq, c_id
          FROM (SELECT j.seq, j.id FROM jobs j WHERE j.tenant_id = p_tenant AND p_tenant <> '' AND j.state = 'pending'
              AND (p_free <= 0 OR j.memory_need IS NULL OR j.memory_need <= p_free OR (p_budget > 0 AND j.memory_need > p_budget))
            ORDER BY j.seq LIMIT p_max FOR UPDATE SKIP LOCKED) AS x;
        c_pending := array_fill(true, ARRAY[coalesce(cardinality(c_seq), 0)]);
        c_busy := array_fill(0, ARRAY[coalesce(cardinality(c_seq), 0)]);
        SELECT c_seq || array_agg(x.seq ORDER BY x.seq), c_id || array_agg(x.id ORDER BY x.seq),
            c_pending || array_agg(false), c_busy || array_agg(x.busy ORDER BY x.seq)
          INTO c_seq, c_id, c_pending, c_busy
          FROM (SELECT j.seq, j.id,
              (SELECT count(*)::INTEGER FROM job_segments r
                WHERE r.tenant_id = p_tenant AND r.job_id = j.id AND r.state = 'running') AS busy
            FROM jobs j WHERE j.tenant_id = p_tenant AND p_tenant <> '' AND j.state = 'running'
              AND EXISTS (SELECT 1 FROM job_segments p
                WHERE p.tenant_id = p_tenant AND p.job_id = j.id AND p.state = 'pending')
            ORDER BY j.seq LIMIT greatest(64, p_max * 4)) AS x;
        IF coalesce(cardinality(c_seq), 0) = 0 THEN
          RETURN;
        END IF;
        c_live := array_fill(true, ARRAY[cardinality(c_seq)]);
        WHILE claimed < p_max LOOP
          best := NULL;
          FOR i IN 1 .. cardinality(c_seq) LOOP
            IF c_live[i] AND (best IS NULL OR c_busy[i] < c_busy[best]
                OR (c_busy[i] = c_busy[best] AND c_seq[i] < c_seq[best])) THEN
              best := i;
            END IF;
          END LOOP;
          EXIT WHEN best IS NULL;
          IF c_pending[best] THEN
            c_live[best] := false;
            UPDATE jobs SET state = 'running', node_id = p_node, started_at = p_now, fence = jobs.fence + 1
              WHERE jobs.tenant_id = p_tenant AND jobs.id = c_id[best] AND jobs.state = 'pending' RETURNING * INTO held;
            IF FOUND THEN
              claimed := claimed + 1;
              RETURN QUERY SELECT NULL::TEXT, NULL::BIGINT, NULL::BOOLEAN, row_to_json(held), NULL::JSON,
                svc_segments_json(p_tenant, held.id);
            END IF;
            CONTINUE;
          END IF;
          -- The job row first (a writer of its segments holds it: skip the job for now).
          PERFORM 1 FROM jobs WHERE jobs.tenant_id = p_tenant AND jobs.id = c_id[best] AND jobs.state = 'running'
            FOR UPDATE SKIP LOCKED;
          IF NOT FOUND THEN
            c_live[best] := false;
            CONTINUE;
          END IF;
          UPDATE job_segments SET state = 'running', node_id = p_node, claimed_at = p_now, fence = job_segments.fence + 1,
              attempts = job_segments.attempts + 1, frames_done = 0, result = NULL, revision = job_segments.revision + 1
            WHERE job_segments.tenant_id = p_tenant AND job_segments.job_id = c_id[best] AND job_segments.idx = (
              SELECT p.idx FROM job_segments p WHERE p.tenant_id = p_tenant AND p.job_id = c_id[best]
                AND p.state = 'pending' ORDER BY p.idx LIMIT 1 FOR UPDATE SKIP LOCKED)
            RETURNING * INTO got;
          IF NOT FOUND THEN
            c_live[best] := false;
            CONTINUE;
          END IF;
          UPDATE jobs SET started_at = coalesce(jobs.started_at, p_now)
            WHERE jobs.tenant_id = p_tenant AND jobs.id = c_id[best] RETURNING * INTO held;
          c_busy[best] := c_busy[best] + 1;
          claimed := claimed + 1;
          RETURN QUERY SELECT NULL::TEXT, NULL::BIGINT, NULL::BOOLEAN, row_to_json(held), row_to_json(got),
            svc_segments_json(p_tenant, held.id);
        END LOOP;
      END $$;

      DROP FUNCTION svc_requeue(TEXT, TEXT, BIGINT, TEXT);
      CREATE FUNCTION svc_requeue(p_tenant TEXT, p_node TEXT, p_before BIGINT, p_listed TEXT, p_needs TEXT) RETURNS SETOF jobs
      LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM svc_enter(p_tenant, false);
        RETURN QUERY UPDATE jobs SET state = 'pending', node_id = NULL, started_at = NULL, result = NULL,
            frames_done = 0, rendition_progress = NULL, fence = fence + 1,
            memory_need = coalesce((SELECT n.value::BIGINT FROM jsonb_each_text(coalesce(p_needs, '{}')::jsonb) n
              WHERE n.key = jobs.id), memory_need)
          WHERE tenant_id = p_tenant AND p_tenant <> '' AND node_id = p_node AND state = 'running'
            AND (p_before IS NULL OR (started_at < p_before
              AND id NOT IN (SELECT jsonb_array_elements_text(p_listed::jsonb))))
          RETURNING *;
        -- A job handed back for want of memory wakes every waiting PullWork of the tenant (state
        -- "memory"), not one: the one woken could be a node without that much free, which skips it.
        IF p_needs IS NOT NULL AND p_needs <> '{}' THEN
          PERFORM pg_notify('${CHANGE_CHANNEL}', json_build_array(p_tenant, '', 'memory', 0)::TEXT);
        END IF;
      END $$;
    `
  },
  {
    version: 11,
    name: "plan alignment of sync segment jobs",
    // Issue 31: a segment job with options.sync "auto" aligns once, in its plan; the pairing is
    // kept with the job (JSON, NULL for any other job) and handed to every segment's node. The
    // plan's function takes it and writes it with the segments, still one statement.
    sql: `
      ALTER TABLE jobs ADD COLUMN plan_alignment TEXT;
      DROP FUNCTION svc_segment_plan(TEXT, TEXT, TEXT, BIGINT, BIGINT, TEXT);
      CREATE FUNCTION svc_segment_plan(p_tenant TEXT, p_job TEXT, p_node TEXT, p_fence BIGINT, p_revision BIGINT,
        p_cuts TEXT, p_alignment TEXT) RETURNS TABLE (job JSON, segments JSON) LANGUAGE plpgsql AS $$
      DECLARE
        held jobs;
      BEGIN
        PERFORM svc_enter(p_tenant, false);
        UPDATE jobs SET node_id = NULL, fence = jobs.fence + 1, frames_done = 0, result = NULL,
            plan_alignment = p_alignment, revision = jobs.revision + 1
          WHERE jobs.tenant_id = p_tenant AND p_tenant <> '' AND jobs.id = p_job AND jobs.state = 'running'
            AND jobs.node_id = p_node AND jobs.fence = p_fence AND jobs.revision = p_revision
            AND NOT EXISTS (SELECT 1 FROM job_segments s WHERE s.tenant_id = p_tenant AND s.job_id = p_job)
          RETURNING * INTO held;
        IF NOT FOUND THEN
          RETURN;
        END IF;
        INSERT INTO job_segments (tenant_id, job_id, idx, first_frame, frame_count, state)
          SELECT p_tenant, p_job, (c.n - 1)::INTEGER, (c.cut ->> 'first_frame')::BIGINT, (c.cut ->> 'frame_count')::BIGINT,
            'pending'
          FROM jsonb_array_elements(p_cuts::jsonb) WITH ORDINALITY AS c (cut, n);
        RETURN QUERY SELECT row_to_json(held), svc_segments_json(p_tenant, p_job);
      END $$;
    `
  },
  {
    version: 12,
    name: "change notifications of pending jobs only, unless a replica has followers",
    // Issue 35 (profiled). A replica listens for two reasons: followers (StreamJobs), who need
    // every change, and long-polling PullWork calls, which only need jobs that became pending.
    // With only the latter, a claim or a report notified all the same: a NOTIFY per statement,
    // whose commit-time queue lock serialises the commits of every notifying transaction, and
    // notes every replica parsed to drop. `followers` says which a replica wants; a row of an
    // older replica (no column) wants everything.
    sql: `
      ALTER TABLE change_listeners ADD COLUMN followers BOOLEAN NOT NULL DEFAULT true;

      CREATE OR REPLACE FUNCTION svc_jobs_notify_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        payload TEXT := '';
        entry TEXT;
        every_change BOOLEAN;
      BEGIN
        SELECT bool_or(l.followers) INTO every_change FROM change_listeners l WHERE l.expires_at > now();
        IF every_change IS NULL THEN
          RETURN NULL;
        END IF;
        FOR entry IN SELECT json_build_array(c.tenant_id, c.id, c.state, c.fence)::TEXT FROM changed c
            WHERE every_change OR c.state = 'pending' ORDER BY c.seq LOOP
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
    `
  },
  {
    version: 13,
    name: "segment memory need, hand-backs that wake only when something went back",
    // Issue 27: a segment handed back for want of memory keeps its node's estimate (NULL: not
    // known); svc_claim_units skips a pending segment whose need exceeds the puller's free memory
    // as it skips jobs, and one claim of several units counts the known needs of those it picked
    // before against the free memory. svc_segments_requeue takes the segments the node lists (besides the jobs)
    // and the segments' needs: a segment with a need goes back to pending with it, the claim not
    // counted as an attempt. The "memory" wake-up (every waiting PullWork of the tenant) is sent
    // by svc_requeue and svc_segments_requeue only when a job or segment with a need did go back
    // to pending (migration 10's svc_requeue sent it whenever needs were given). Applied
    // migrations are never edited: these are new versions of the functions, one call each still.
    sql: `
      ALTER TABLE job_segments ADD COLUMN memory_need BIGINT;

      CREATE OR REPLACE FUNCTION svc_claim_units(p_tenant TEXT, p_node TEXT, p_now BIGINT, p_max INTEGER, p_check BOOLEAN,
        p_free BIGINT, p_budget BIGINT)
      RETURNS TABLE (session_tenant TEXT, session_expires BIGINT, scores_segments BOOLEAN, job JSON, segment JSON,
        segments JSON) LANGUAGE plpgsql AS $$
      DECLARE
        s_tenant TEXT;
        s_expires BIGINT;
        s_segments BOOLEAN;
        c_seq BIGINT[];
        c_id TEXT[];
        c_pending BOOLEAN[];
        c_busy INTEGER[];
        c_live BOOLEAN[];
        c_need BIGINT[];
        left_free BIGINT := p_free;
        best INTEGER;
        claimed INTEGER := 0;
        held jobs;
        got job_segments;
      BEGIN
        PERFORM svc_enter('', true);
        SELECT ns.tenant_id, ns.expires_at, ns.scores_segments INTO s_tenant, s_expires, s_segments
          FROM node_sessions ns WHERE ns.node_id = p_node;
        RETURN QUERY SELECT s_tenant, s_expires, coalesce(s_segments, false), NULL::JSON, NULL::JSON, NULL::JSON;
        IF p_check AND (s_tenant IS DISTINCT FROM p_tenant OR s_expires <= p_now) THEN
          RETURN;
        END IF;
        PERFORM svc_enter(p_tenant, false);
        -- Unchecked (the caller checked the session and asks for segment units) or a capable node.
        IF p_check AND NOT coalesce(s_segments, false) THEN
          RETURN QUERY WITH picked AS (
              SELECT j.seq FROM jobs j WHERE j.tenant_id = p_tenant AND p_tenant <> '' AND j.state = 'pending'
                AND (p_free <= 0 OR j.memory_need IS NULL OR j.memory_need <= p_free OR (p_budget > 0 AND j.memory_need > p_budget))
              ORDER BY j.seq LIMIT p_max FOR UPDATE SKIP LOCKED),
            claimed_jobs AS (
              UPDATE jobs SET state = 'running', node_id = p_node, started_at = p_now, fence = jobs.fence + 1
              FROM picked WHERE jobs.seq = picked.seq AND jobs.tenant_id = p_tenant
              RETURNING jobs.*)
            SELECT NULL::TEXT, NULL::BIGINT, NULL::BOOLEAN, row_to_json(c), NULL::JSON, '[]'::JSON
            FROM claimed_jobs c ORDER BY c.seq;
          RETURN;
        END IF;
        -- Candidates: the oldest pending jobs (at most p_max can be picked; locked, others skip
        -- them) and running jobs with a pending segment, each with its units running.
        SELECT array_agg(x.seq ORDER BY x.seq), array_agg(x.id ORDER BY x.seq), array_agg(x.memory_need ORDER BY x.seq)
          INTO c_seq, c_id, c_need
          FROM (SELECT j.seq, j.id, j.memory_need FROM jobs j WHERE j.tenant_id = p_tenant AND p_tenant <> '' AND j.state = 'pending'
              AND (p_free <= 0 OR j.memory_need IS NULL OR j.memory_need <= p_free OR (p_budget > 0 AND j.memory_need > p_budget))
            ORDER BY j.seq LIMIT p_max FOR UPDATE SKIP LOCKED) AS x;
        c_pending := array_fill(true, ARRAY[coalesce(cardinality(c_seq), 0)]);
        c_busy := array_fill(0, ARRAY[coalesce(cardinality(c_seq), 0)]);
        SELECT c_seq || array_agg(x.seq ORDER BY x.seq), c_id || array_agg(x.id ORDER BY x.seq),
            c_pending || array_agg(false), c_busy || array_agg(x.busy ORDER BY x.seq)
          INTO c_seq, c_id, c_pending, c_busy
          FROM (SELECT j.seq, j.id,
              (SELECT count(*)::INTEGER FROM job_segments r
                WHERE r.tenant_id = p_tenant AND r.job_id = j.id AND r.state = 'running') AS busy
            FROM jobs j WHERE j.tenant_id = p_tenant AND p_tenant <> '' AND j.state = 'running'
              AND EXISTS (SELECT 1 FROM job_segments p
                WHERE p.tenant_id = p_tenant AND p.job_id = j.id AND p.state = 'pending'
                  AND (p_free <= 0 OR p.memory_need IS NULL OR p.memory_need <= p_free OR (p_budget > 0 AND p.memory_need > p_budget)))
            ORDER BY j.seq LIMIT greatest(64, p_max * 4)) AS x;
        IF coalesce(cardinality(c_seq), 0) = 0 THEN
          RETURN;
        END IF;
        c_live := array_fill(true, ARRAY[cardinality(c_seq)]);
        WHILE claimed < p_max LOOP
          best := NULL;
          FOR i IN 1 .. cardinality(c_seq) LOOP
            IF c_live[i] AND (best IS NULL OR c_busy[i] < c_busy[best]
                OR (c_busy[i] = c_busy[best] AND c_seq[i] < c_seq[best])) THEN
              best := i;
            END IF;
          END LOOP;
          EXIT WHEN best IS NULL;
          IF c_pending[best] THEN
            c_live[best] := false;
            -- The free memory left after the units claimed before (their known needs).
            IF NOT (left_free <= 0 OR c_need[best] IS NULL OR c_need[best] <= left_free
                OR (p_budget > 0 AND c_need[best] > p_budget)) THEN
              CONTINUE;
            END IF;
            UPDATE jobs SET state = 'running', node_id = p_node, started_at = p_now, fence = jobs.fence + 1
              WHERE jobs.tenant_id = p_tenant AND jobs.id = c_id[best] AND jobs.state = 'pending' RETURNING * INTO held;
            IF FOUND THEN
              claimed := claimed + 1;
              IF left_free > 0 AND held.memory_need IS NOT NULL AND NOT (p_budget > 0 AND held.memory_need > p_budget) THEN
                left_free := greatest(1, left_free - held.memory_need);
              END IF;
              RETURN QUERY SELECT NULL::TEXT, NULL::BIGINT, NULL::BOOLEAN, row_to_json(held), NULL::JSON,
                svc_segments_json(p_tenant, held.id);
            END IF;
            CONTINUE;
          END IF;
          -- The job row first (a writer of its segments holds it: skip the job for now).
          PERFORM 1 FROM jobs WHERE jobs.tenant_id = p_tenant AND jobs.id = c_id[best] AND jobs.state = 'running'
            FOR UPDATE SKIP LOCKED;
          IF NOT FOUND THEN
            c_live[best] := false;
            CONTINUE;
          END IF;
          UPDATE job_segments SET state = 'running', node_id = p_node, claimed_at = p_now, fence = job_segments.fence + 1,
              attempts = job_segments.attempts + 1, frames_done = 0, result = NULL, revision = job_segments.revision + 1
            WHERE job_segments.tenant_id = p_tenant AND job_segments.job_id = c_id[best] AND job_segments.idx = (
              SELECT p.idx FROM job_segments p WHERE p.tenant_id = p_tenant AND p.job_id = c_id[best]
                AND p.state = 'pending'
                AND (left_free <= 0 OR p.memory_need IS NULL OR p.memory_need <= left_free OR (p_budget > 0 AND p.memory_need > p_budget))
                ORDER BY p.idx LIMIT 1 FOR UPDATE SKIP LOCKED)
            RETURNING * INTO got;
          IF NOT FOUND THEN
            c_live[best] := false;
            CONTINUE;
          END IF;
          UPDATE jobs SET started_at = coalesce(jobs.started_at, p_now)
            WHERE jobs.tenant_id = p_tenant AND jobs.id = c_id[best] RETURNING * INTO held;
          c_busy[best] := c_busy[best] + 1;
          claimed := claimed + 1;
          IF left_free > 0 AND got.memory_need IS NOT NULL AND NOT (p_budget > 0 AND got.memory_need > p_budget) THEN
            left_free := greatest(1, left_free - got.memory_need);
          END IF;
          RETURN QUERY SELECT NULL::TEXT, NULL::BIGINT, NULL::BOOLEAN, row_to_json(held), row_to_json(got),
            svc_segments_json(p_tenant, held.id);
        END LOOP;
      END $$;

      CREATE OR REPLACE FUNCTION svc_requeue(p_tenant TEXT, p_node TEXT, p_before BIGINT, p_listed TEXT, p_needs TEXT)
      RETURNS SETOF jobs LANGUAGE plpgsql AS $$
      DECLARE
        needs JSONB := coalesce(p_needs, '{}')::jsonb;
        requeued jobs;
        woken BOOLEAN := false;
      BEGIN
        PERFORM svc_enter(p_tenant, false);
        FOR requeued IN UPDATE jobs SET state = 'pending', node_id = NULL, started_at = NULL, result = NULL,
            frames_done = 0, rendition_progress = NULL, fence = fence + 1,
            memory_need = coalesce((SELECT n.value::BIGINT FROM jsonb_each_text(needs) n WHERE n.key = jobs.id), memory_need)
          WHERE tenant_id = p_tenant AND p_tenant <> '' AND node_id = p_node AND state = 'running'
            AND (p_before IS NULL OR (started_at < p_before
              AND id NOT IN (SELECT jsonb_array_elements_text(p_listed::jsonb))))
          RETURNING * LOOP
          woken := woken OR needs ? requeued.id;
          RETURN NEXT requeued;
        END LOOP;
        -- A job handed back for want of memory wakes every waiting PullWork of the tenant (state
        -- "memory"), not one: the one woken could be a node without that much free, which skips it.
        IF woken THEN
          PERFORM pg_notify('${CHANGE_CHANNEL}', json_build_array(p_tenant, '', 'memory', 0)::TEXT);
        END IF;
      END $$;

      -- A lost node's running segments (all, or those claimed before p_before and not listed: by
      -- name in p_segments, "<job id>#<index>", when the node names any, else by their job in
      -- p_listed, as an older node lists them): back to pending,
      -- or the job failed once a segment was handed out p_max_attempts times. A segment with a need
      -- in p_needs ({"<job id>#<index>": bytes}) was handed back for want of memory: pending with
      -- its need, the claim not counted, and every waiting PullWork of the tenant woken. Returns
      -- the jobs changed.
      DROP FUNCTION svc_segments_requeue(TEXT, TEXT, BIGINT, TEXT, BIGINT, INTEGER);
      CREATE FUNCTION svc_segments_requeue(p_tenant TEXT, p_node TEXT, p_before BIGINT, p_listed TEXT, p_segments TEXT,
        p_needs TEXT, p_now BIGINT, p_max_attempts INTEGER) RETURNS SETOF TEXT LANGUAGE plpgsql AS $$
      DECLARE
        lost RECORD;
        needs JSONB := coalesce(p_needs, '{}')::jsonb;
        need BIGINT;
        woken BOOLEAN := false;
      BEGIN
        PERFORM svc_enter(p_tenant, false);
        FOR lost IN SELECT s.job_id, s.idx, s.attempts FROM job_segments s
            WHERE s.tenant_id = p_tenant AND p_tenant <> '' AND s.node_id = p_node AND s.state = 'running'
              AND (p_before IS NULL OR (coalesce(s.claimed_at, 0) < p_before
                AND CASE WHEN jsonb_array_length(coalesce(p_segments, '[]')::jsonb) > 0
                  THEN (s.job_id || '#' || s.idx) NOT IN (SELECT jsonb_array_elements_text(p_segments::jsonb))
                  ELSE s.job_id NOT IN (SELECT jsonb_array_elements_text(p_listed::jsonb)) END))
            ORDER BY s.job_id, s.idx LOOP
          PERFORM 1 FROM jobs WHERE jobs.tenant_id = p_tenant AND jobs.id = lost.job_id FOR UPDATE;
          need := (needs ->> (lost.job_id || '#' || lost.idx))::BIGINT;
          IF need IS NULL AND lost.attempts >= p_max_attempts THEN
            PERFORM svc_segment_end(p_tenant, lost.job_id, 'failed', NULL, 'segment ' || lost.idx
              || ' was lost with its node ' || lost.attempts || ' times (at most ' || p_max_attempts || ' attempts)', p_now);
          ELSE
            UPDATE job_segments SET state = 'pending', node_id = NULL, claimed_at = NULL, result = NULL, frames_done = 0,
                fence = job_segments.fence + 1, revision = job_segments.revision + 1,
                attempts = CASE WHEN need IS NULL THEN job_segments.attempts ELSE greatest(job_segments.attempts - 1, 0) END,
                memory_need = coalesce(need, job_segments.memory_need)
              WHERE job_segments.tenant_id = p_tenant AND job_segments.job_id = lost.job_id
                AND job_segments.idx = lost.idx AND job_segments.state = 'running' AND job_segments.node_id = p_node;
            woken := woken OR (FOUND AND need IS NOT NULL);
            UPDATE jobs SET frames_done = (SELECT coalesce(sum(s.frames_done), 0) FROM job_segments s
                WHERE s.tenant_id = p_tenant AND s.job_id = lost.job_id)
              WHERE jobs.tenant_id = p_tenant AND jobs.id = lost.job_id AND jobs.state = 'running';
          END IF;
          RETURN NEXT lost.job_id;
        END LOOP;
        IF woken THEN
          PERFORM pg_notify('${CHANGE_CHANNEL}', json_build_array(p_tenant, '', 'memory', 0)::TEXT);
        END IF;
      END $$;
    `
  },
  {
    version: 14,
    name: "reports find their jobs by id, whatever the table's statistics",
    // Issue 35 (profiled): a report's read matched its jobs with `id IN (…)` beside the tenant's
    // condition, and its write joined the batch to the table. On a table filled faster than
    // autovacuum analyses it (a queue that just received a burst of jobs) the planner believes the
    // tenant has a handful of rows, so it scanned every job of the tenant, row-level security
    // checked on each, instead of the unique index on id: about 3 ms of CPU per report of 4 jobs
    // at 1,200 jobs, growing with the queue. Each job is now looked up by its id alone (a lateral
    // lookup with LIMIT 1, which no statistics turn into a scan), then checked against the
    // tenant; the write finds its rows the same way and updates them by primary key, still one
    // statement (one statement-level trigger). Same rows, same results.
    sql: `
      CREATE OR REPLACE FUNCTION svc_report_read(p_tenant TEXT, p_ids TEXT, p_reporter TEXT)
      RETURNS TABLE (session_tenant TEXT, session_expires BIGINT, job JSON) LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM svc_enter('', true);
        RETURN QUERY SELECT ns.tenant_id, ns.expires_at, NULL::JSON FROM (SELECT 1) AS one
          LEFT JOIN node_sessions ns ON ns.node_id = p_reporter;
        PERFORM svc_enter(p_tenant, false);
        RETURN QUERY SELECT NULL::TEXT, owner.expires_at, row_to_json(j)
          FROM (SELECT DISTINCT w.id FROM jsonb_array_elements_text(p_ids::jsonb) AS w (id)) AS wanted
          CROSS JOIN LATERAL (SELECT * FROM jobs WHERE jobs.id = wanted.id LIMIT 1) AS j
          LEFT JOIN node_sessions owner ON owner.node_id = j.node_id
          WHERE j.tenant_id = p_tenant AND p_tenant <> '';
      END $$;

      CREATE OR REPLACE FUNCTION svc_report_write(p_tenant TEXT, p_updates TEXT, p_now BIGINT) RETURNS SETOF jobs
      LANGUAGE plpgsql AS $$
      DECLARE
        updates JSONB := p_updates::jsonb;
        targets BIGINT[];
      BEGIN
        PERFORM svc_enter(p_tenant, false);
        targets := ARRAY(SELECT t.seq FROM jsonb_array_elements(updates) AS x (one)
          CROSS JOIN LATERAL (SELECT jobs.seq FROM jobs WHERE jobs.id = x.one ->> 'id' LIMIT 1) AS t);
        RETURN QUERY UPDATE jobs SET node_id = u.node_id, result = coalesce(u.result, jobs.result),
            frames_done = u.frames_done, rendition_progress = u.rendition_progress,
            state = coalesce(u.state, jobs.state),
            error = CASE WHEN u.state IS NULL THEN jobs.error ELSE u.error END,
            finished_at = CASE WHEN u.state IS NULL THEN jobs.finished_at ELSE p_now END,
            fence = CASE WHEN u.node_id = u.expected_node THEN jobs.fence ELSE jobs.fence + 1 END,
            revision = jobs.revision + 1
          FROM jsonb_to_recordset(updates) AS u (id TEXT, expected_node TEXT, expected_fence BIGINT,
            expected_revision BIGINT, node_id TEXT, result TEXT, frames_done BIGINT, rendition_progress TEXT,
            state TEXT, error TEXT)
          WHERE jobs.seq = ANY (targets) AND jobs.tenant_id = p_tenant AND p_tenant <> '' AND jobs.id = u.id
            AND jobs.state = 'running' AND jobs.node_id = u.expected_node AND jobs.fence = u.expected_fence
            AND jobs.revision = u.expected_revision
          RETURNING jobs.*;
      END $$;
    `
  },
  {
    version: 15,
    name: "change notifications name the replica that owns their wake-ups",
    // Issue 35 (measured): every replica woke a waiting PullWork for every job that became
    // pending, so with two replicas two nodes claimed and one came back empty: a wasted claim per
    // job per extra replica. A note now names the replica whose statement made the change (its
    // connections' application_name is "svc-controller <replica>") when that replica is
    // listening: that replica alone wakes a waiter, and hands on what it has no waiter for (see
    // postgres/store.ts). A note of a replica not listening names none: every replica wakes one.
    sql: `
      CREATE OR REPLACE FUNCTION svc_jobs_notify_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        payload TEXT := '';
        entry TEXT;
        every_change BOOLEAN;
        origin TEXT;
      BEGIN
        SELECT bool_or(l.followers),
            max(l.replica) FILTER (WHERE 'svc-controller ' || l.replica = current_setting('application_name'))
          INTO every_change, origin FROM change_listeners l WHERE l.expires_at > now();
        IF every_change IS NULL THEN
          RETURN NULL;
        END IF;
        FOR entry IN SELECT json_build_array(c.tenant_id, c.id, c.state, c.fence, coalesce(origin, ''))::TEXT
            FROM changed c WHERE every_change OR c.state = 'pending' ORDER BY c.seq LOOP
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
