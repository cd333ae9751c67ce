import { describe, expect, it } from "vitest"
import { parseProgramRun, unitTestsSuite } from "./unit-tests.ts"

const passing = {
  program: "scorer_test",
  stdout: "PASS setup: 2 checks\nPASS models: 59 checks\nPASS jobs: 29 checks\n95 passed, 0 failed\n",
  stderr: "",
  exitCode: 0
}

describe("parseProgramRun", () => {
  it("reads one case per PASS line and its message", () => {
    expect(parseProgramRun(passing)).toEqual({
      program: "scorer_test",
      result: "pass",
      cases: { setup: "pass", models: "pass", jobs: "pass" },
      messages: { setup: "2 checks", models: "59 checks", jobs: "29 checks" },
      failures: []
    })
  })

  it("fails a case on its FAIL line and quotes the failed checks of either stream, not as cases", () => {
    const outcome = parseProgramRun({
      program: "reader_test",
      stdout: "PASS raw: 114 checks\nFAIL y4m: 1 of 187 checks failed\n305 passed, 1 failed\n",
      stderr: "FAIL reader_test.c:99: gw == w: y4m_3.y4m: geometry 4x2 444 8\n",
      exitCode: 1
    })
    expect(outcome.result).toBe("fail")
    expect(outcome.cases).toEqual({ raw: "pass", y4m: "fail" })
    expect(outcome.failures).toEqual([
      "reader_test: y4m: 1 of 187 checks failed",
      "reader_test: FAIL reader_test.c:99: gw == w: y4m_3.y4m: geometry 4x2 444 8",
      "reader_test: exit code 1"
    ])
  })

  it("fails a program that crashed before its summary, keeping the cases it finished", () => {
    const outcome = parseProgramRun({
      program: "scorer_test",
      stdout: "PASS setup: 2 checks\n",
      stderr: "",
      exitCode: null,
      problem: "killed by SIGSEGV"
    })
    expect(outcome.result).toBe("fail")
    expect(outcome.cases).toEqual({ setup: "pass" })
    expect(outcome.failures).toEqual(["scorer_test: killed by SIGSEGV"])
  })

  it("fails a program without a summary line, or whose summary counts failures", () => {
    expect(parseProgramRun({ ...passing, stdout: "PASS setup: 2 checks\n" }).failures).toEqual([
      'scorer_test: no "N passed, M failed" line (exit code 0)'
    ])
    expect(parseProgramRun({ ...passing, stdout: "PASS setup: 2 checks\n1 passed, 1 failed\n" }).result).toBe("fail")
  })

  it("quotes at most 20 failed checks and counts the rest", () => {
    const checks = Array.from({ length: 25 }, (_, i) => `FAIL scorer_test.c:${i}: check ${i}`).join("\n")
    const outcome = parseProgramRun({
      ...passing,
      stdout: `${checks}\nFAIL jobs: 25 of 29 checks failed\n4 passed, 25 failed\n`,
      exitCode: 1
    })
    expect(outcome.failures).toContain("scorer_test: 5 more failed checks")
    expect(outcome.failures.filter((line) => line.includes(".c:"))).toHaveLength(20)
  })

  it("cuts a case message to 300 characters", () => {
    const outcome = parseProgramRun({ ...passing, stdout: `PASS long: ${"é".repeat(400)}\n0 passed, 0 failed\n` })
    expect(Array.from(outcome.messages["long"] ?? "")).toHaveLength(300)
  })
})

describe("unitTestsSuite", () => {
  it("counts cases over programs and records each program's result", () => {
    const suite = unitTestsSuite([
      passing,
      {
        program: "reader_test",
        stdout: "PASS raw: 1 checks\nFAIL fuzz: 1 of 2 checks failed\n2 passed, 1 failed\n",
        stderr: "",
        exitCode: 1
      }
    ])
    expect(suite).toMatchObject({ status: "fail", total: 5, passed: 4, failed: 1, skipped: 0 })
    expect(suite.results).toEqual({ scorer_test: "pass", reader_test: "fail" })
    expect(suite.cases?.["reader_test"]).toEqual({ raw: "pass", fuzz: "fail" })
  })

  it("passes only when every program passed", () => {
    expect(unitTestsSuite([passing]).status).toBe("pass")
    expect(unitTestsSuite([]).status).toBe("fail")
  })
})
