/**
 * svc-mcp's HTTP listener answers malformed Host and Origin headers plainly (issue 27): a Host
 * with userinfo (`127.0.0.1:PORT@evil.example`, which a URL parser reads as another host or
 * rejects) gets 400 and an Origin that is not an origin 403, with no internals (no "TypeError",
 * no parser message) in the answer. Raw HTTP over a socket, so the headers go as written.
 */
import { connect } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type RunningService, startService } from "../../local/executables.ts"

/** Sends `head` (request line and headers) and an empty JSON body; the status and body of the answer. */
const rawRequest = (address: string, head: ReadonlyArray<string>) =>
  new Promise<{ status: number; body: string }>((resolve, reject) => {
    const url = new URL(address)
    const socket = connect(Number(url.port), url.hostname)
    let received = ""
    socket.setEncoding("utf8")
    socket.on("data", (chunk: string) => {
      received += chunk
    })
    socket.on("error", reject)
    socket.on("close", () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(received)?.[1] ?? 0)
      resolve({ status, body: received.slice(received.indexOf("\r\n\r\n") + 4) })
    })
    socket.write(
      `${[...head, "content-type: application/json", "content-length: 2", "connection: close"].join("\r\n")}\r\n\r\n{}`
    )
  })

describe("svc-mcp Host and Origin", () => {
  let mcp: RunningService
  beforeAll(async () => {
    mcp = await startService("svc-mcp", {
      env: { SVC_MCP_TRANSPORT: "http", SVC_CONTROLLER_ADDR: "127.0.0.1:1" }
    })
  })
  afterAll(() => mcp.stop())

  it("a Host with userinfo gets a plain 400", async () => {
    const port = new URL(mcp.http).port
    for (const host of [`127.0.0.1:${port}@evil.example`, "127.0.0.1:80/x", "local host"]) {
      const answer = await rawRequest(mcp.http, ["POST /mcp HTTP/1.1", `Host: ${host}`, "Authorization: Bearer t"])
      expect(answer.status, host).toBe(400)
      expect(answer.body).not.toMatch(/TypeError|Invalid URL|Error:/)
    }
  })

  it("an Origin that is not an origin gets a plain 403", async () => {
    const port = new URL(mcp.http).port
    for (const origin of ["http://[::1", "null", "not a url"]) {
      const answer = await rawRequest(mcp.http, [
        "POST /mcp HTTP/1.1",
        `Host: 127.0.0.1:${port}`,
        `Origin: ${origin}`,
        "Authorization: Bearer t"
      ])
      expect(answer.status, origin).toBe(403)
      expect(answer.body).not.toMatch(/TypeError|Invalid URL/)
    }
  })
})
