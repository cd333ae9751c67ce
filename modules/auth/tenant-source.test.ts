import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Context, Duration, Effect, Layer, TestClock } from "effect"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Authenticator, authLayer, AuthStatus } from "./authenticator.ts"
import { KubernetesDouble } from "../../test/support/kubernetes-double.ts"
import { DEFAULT_REFRESH_MILLIS } from "./config.ts"
import {
  fileTenantSource,
  inClusterAccess,
  orchestratorTenantSource,
  type OrchestratorAccess
} from "./tenant-source.ts"
import {
  eventually,
  jsonHandler,
  jwksBody,
  LoopbackServer,
  makeKey,
  opensslAvailable,
  selfSignedCertificate,
  signToken,
  tenantDocument
} from "../../local/auth.ts"

const key = makeKey("k")
const ISSUER = "https://idp.example.com/"

let dir = ""
let kube: KubernetesDouble
let provider: LoopbackServer
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "svc-kube-"))
  writeFileSync(join(dir, "token"), "token-1\n")
  kube = new KubernetesDouble("token-1")
  provider = new LoopbackServer(jsonHandler(() => jwksBody(key.jwk)))
})
afterEach(() => {
  kube.stop()
  provider.stop()
  rmSync(dir, { recursive: true, force: true })
})

const access = (overrides: Partial<OrchestratorAccess> = {}): OrchestratorAccess => ({
  apiBase: kube.apiBase(),
  namespace: "svc",
  tokenPath: join(dir, "token"),
  caPath: undefined,
  timeoutMillis: 5_000,
  maxBodyBytes: 1024 * 1024,
  ...overrides
})

const tenant = (tenantId: string, spec: Record<string, unknown> = {}) =>
  tenantDocument(tenantId, { oidc: { issuer: ISSUER, jwksEndpoint: provider.url("/jwks") }, ...spec })

const names = (documents: ReadonlyArray<{ readonly origin: string }>) => documents.map((document) => document.origin)

describe("orchestrator tenant source (against the Kubernetes double)", () => {
  it.effect("lists every SvcTenant of the namespace, following continue pages", () =>
    Effect.gen(function* () {
      for (const id of ["a", "b", "c", "d", "e"]) kube.put("svc", tenant(id))
      kube.put("other", tenant("x"))
      const documents = yield* orchestratorTenantSource(access()).read
      expect(names(documents)).toEqual(["svctenants/a", "svctenants/b", "svctenants/c", "svctenants/d", "svctenants/e"])
      expect(kube.server.hits).toBe(3)
      const request = kube.server.requests[0]
      expect(new URL(request?.url ?? "").pathname).toBe("/apis/svc.dev/v1/namespaces/svc/svctenants")
      expect(request?.headers.get("authorization")).toBe("Bearer token-1")
    })
  )

  it.effect("re-reads the service-account token on every list (projected tokens rotate)", () =>
    Effect.gen(function* () {
      kube.put("svc", tenant("a"))
      const source = orchestratorTenantSource(access())
      yield* source.read
      kube.token = "token-2"
      writeFileSync(join(dir, "token"), "token-2")
      expect(names(yield* source.read)).toEqual(["svctenants/a"])
    })
  )

  it.effect("reports the API server's refusals with their status and message", () =>
    Effect.gen(function* () {
      kube.forbidden.add("svc")
      expect((yield* Effect.flip(orchestratorTenantSource(access()).read)).message).toContain(
        `orchestrator source: HTTP 403: svctenants.svc.dev is forbidden: cannot list resource "svctenants" in namespace "svc"`
      )
      kube.token = "other"
      expect((yield* Effect.flip(orchestratorTenantSource(access()).read)).message).toContain("HTTP 401: Unauthorized")
      expect(
        (yield* Effect.flip(orchestratorTenantSource(access({ tokenPath: join(dir, "missing") })).read)).message
      ).toContain("cannot read")
    })
  )

  it.effect.skipIf(!opensslAvailable)("trusts the API server through the CA file over https", () =>
    Effect.gen(function* () {
      const tls = selfSignedCertificate()
      writeFileSync(join(dir, "ca.crt"), tls.cert)
      const secure = new KubernetesDouble("token-1", tls)
      try {
        secure.put("svc", tenant("a"))
        expect(
          names(
            yield* orchestratorTenantSource(
              access({ apiBase: secure.apiBase("localhost"), caPath: join(dir, "ca.crt") })
            ).read
          )
        ).toEqual(["svctenants/a"])
        // Without the CA the self-signed server is not trusted.
        expect(
          (yield* Effect.flip(orchestratorTenantSource(access({ apiBase: secure.apiBase("localhost") })).read))._tag
        ).toBe("TenantSourceError")
      } finally {
        secure.stop()
      }
    })
  )
})

describe("in-cluster access", () => {
  const withEnv = <A, E>(effect: Effect.Effect<A, E>, env: Record<string, string>) =>
    Effect.withConfigProvider(effect, ConfigProvider.fromMap(new Map(Object.entries(env))))

  it.effect(
    "reads the API address from the environment and token, CA and namespace from the service-account directory",
    () =>
      Effect.gen(function* () {
        const accountDir = join(dir, "serviceaccount")
        mkdirSync(accountDir)
        writeFileSync(join(accountDir, "namespace"), "tenants-ns\n")
        const found = yield* withEnv(inClusterAccess(undefined, accountDir), {
          KUBERNETES_SERVICE_HOST: "10.0.0.1",
          KUBERNETES_SERVICE_PORT: "6443"
        })
        expect(found).toMatchObject({
          apiBase: "https://10.0.0.1:6443",
          namespace: "tenants-ns",
          tokenPath: join(accountDir, "token"),
          caPath: join(accountDir, "ca.crt")
        })
        const named = yield* withEnv(inClusterAccess("svc", join(dir, "none")), { KUBERNETES_SERVICE_HOST: "fd00::1" })
        expect(named).toMatchObject({ apiBase: "https://[fd00::1]:443", namespace: "svc" })
      })
  )

  it.effect("fails outside a cluster or without a namespace", () =>
    Effect.gen(function* () {
      expect((yield* Effect.flip(withEnv(inClusterAccess("svc"), {}))).message).toContain(
        "KUBERNETES_SERVICE_HOST is not set"
      )
      expect(
        (yield* Effect.flip(
          withEnv(inClusterAccess(undefined, join(dir, "none")), { KUBERNETES_SERVICE_HOST: "10.0.0.1" })
        )).message
      ).toContain("SVC_AUTH_TENANTS_NAMESPACE is unset")
    })
  )
})

describe("registry over the orchestrator source", () => {
  const build = (namespace = "svc") =>
    Effect.map(
      Layer.build(
        authLayer({ orchestratorAccess: (configured) => Effect.succeed(access({ namespace: configured ?? "unset" })) })
      ).pipe(
        Effect.withConfigProvider(
          ConfigProvider.fromMap(
            new Map([
              ["SVC_AUTH_TENANTS_SOURCE", "orchestrator"],
              ["SVC_AUTH_TENANTS_NAMESPACE", namespace]
            ])
          )
        )
      ),
      (context) => ({
        authenticate: Context.get(context, Authenticator).authenticate,
        status: Context.get(context, AuthStatus)
      })
    )
  const bearer = (tid: string) =>
    Effect.map(
      Effect.promise(() => signToken(key, { iss: ISSUER, tid })),
      (token) => `Bearer ${token}`
    )

  it.scoped("loads the namespace's tenants and applies changes at the next re-list", () =>
    Effect.gen(function* () {
      kube.put("svc", tenant("acme"))
      kube.put("svc", tenant("globex", { enabled: false }))
      const auth = yield* build()
      expect((yield* auth.authenticate(yield* bearer("acme"))).tenantId).toBe("acme")
      expect((yield* Effect.flip(auth.authenticate(yield* bearer("globex"))))._tag).toBe("PermissionDenied")
      kube.put("svc", tenant("globex", { enabled: true }))
      kube.put("svc", tenant("acme", { enabled: false }))
      yield* TestClock.adjust(Duration.millis(DEFAULT_REFRESH_MILLIS))
      yield* eventually(Effect.either(auth.authenticate(yield* bearer("acme"))), (result) => result._tag === "Left")
      expect((yield* auth.authenticate(yield* bearer("globex"))).tenantId).toBe("globex")
    })
  )

  it.scoped("keeps the last set while the API server fails, and goes stale after ten intervals", () =>
    Effect.gen(function* () {
      kube.put("svc", tenant("acme"))
      const auth = yield* build()
      kube.failWith = 500
      yield* TestClock.adjust(Duration.millis(DEFAULT_REFRESH_MILLIS))
      yield* eventually(auth.status.tenantSet, (status) => status?.lastReadError?.includes("HTTP 500") ?? false)
      yield* auth.authenticate(yield* bearer("acme"))
      yield* TestClock.adjust(Duration.millis(9 * DEFAULT_REFRESH_MILLIS + 1))
      expect((yield* Effect.flip(auth.authenticate(yield* bearer("acme")))).message).toBe(
        "tenant configuration is stale"
      )
    })
  )

  it.scoped("stops start-up when the source cannot be read or a resource is invalid", () =>
    Effect.gen(function* () {
      kube.forbidden.add("locked")
      expect((yield* Effect.flip(build("locked"))).message).toContain("tenant registry (orchestrator")
      kube.put("svc", { ...tenant("acme"), spec: { ...(tenant("acme").spec as object), scoringRoots: ["/media"] } })
      expect((yield* Effect.flip(build())).message).toContain(`SvcTenant "acme": spec.scoringRoots: is unexpected`)
    })
  )
})

describe("file tenant source", () => {
  it.effect("reads a list of tenants from JSON", () =>
    Effect.gen(function* () {
      const path = join(dir, "tenants.json")
      writeFileSync(path, JSON.stringify({ apiVersion: "v1", kind: "List", items: [tenant("a"), tenant("b")] }))
      const documents = yield* fileTenantSource(path).read
      expect(documents).toHaveLength(1)
      expect(fileTenantSource(path).expandsLists).toBe(true)
    })
  )
})
