import { describe, expect, it } from "vitest"
import { Database } from "bun:sqlite"
describe("sanity", () => { it("sqlite", () => { const db = new Database(":memory:"); expect(db.query("select 1 as x").get()).toEqual({ x: 1 }) }) })
