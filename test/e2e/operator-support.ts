/**
 * The set-up both svc-operator e2e files share: the Kubernetes API double over TLS, the operator's
 * service-account directory (token, namespace, CA), the compiled controller in registry mode with
 * its gRPC client, and svc-operator started with the API's address and short lease and resync
 * intervals. Operators a test starts are killed after it (their logs printed when it failed), so
 * none acts in the next test.
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { afterAll, afterEach, beforeAll } from "vitest"
import { selfSignedCertificate } from "../../local/auth.ts"
import { type RunningService, startService } from "../../local/executables.ts"
import { KubernetesResourcesDouble } from "../support/kubernetes-resources-double.ts"
import { ControllerClient, controllerEnv, Scratch, startController } from "./controller-support.ts"

/** The service-account token the API double accepts. */
export const API_TOKEN = "operator-service-account-token"
export const FINALIZER = "svc.dev/cancel-controller-job"

/** A SvcJob as the API double holds it. */
export type Resource = Record<string, unknown> & {
  metadata: Record<string, unknown> & { name: string; uid: string; finalizers?: Array<string> }
  status?: Record<string, unknown> & {
    phase?: string
    jobId?: string
    score?: number
    error?: string
    conditions?: Array<{ type: string; status: string; reason: string; message: string }>
  }
}

export interface OperatorSetupOptions {
  /** The operator's own namespace (the service account's `namespace` file). */
  readonly namespace: string
  /** The tenants file the controller reads (written before it starts). */
  readonly tenants: (scratch: Scratch) => string
  /** Whether ca.crt is the API's certificate; otherwise another self-signed one, which TLS must refuse. */
  readonly trustApi: boolean
  /** Writes inputs into the scratch folder before the controller starts. */
  readonly prepare?: (scratch: Scratch) => void
}

export interface OperatorSetup {
  readonly scratch: Scratch
  readonly apiTls: { readonly cert: string; readonly key: string }
  readonly api: KubernetesResourcesDouble
  readonly accountDir: string
  /** Every service started for the file (operators and nodes): killed after the last test. */
  readonly running: Array<RunningService>
  /** The controller and its client, from the first test on. */
  readonly controller: RunningService
  readonly client: ControllerClient
  /** The environment every svc-operator here gets: the API, the service account, the controller. */
  readonly operatorEnv: () => Record<string, string>
  /** svc-operator with `operatorEnv()` and `env`, killed after the current test. */
  readonly startOperator: (env: Record<string, string>) => Promise<RunningService>
  /** The Events the operator recorded for one object. */
  readonly eventsOf: (
    namespace: string,
    name: string
  ) => Array<{ readonly type: string; readonly reason: string; readonly message: string }>
}

/** Registers the calling describe's beforeAll, afterEach and afterAll. */
export const useOperatorSetup = (options: OperatorSetupOptions): OperatorSetup => {
  const scratch = new Scratch()
  const apiTls = selfSignedCertificate()
  const api = new KubernetesResourcesDouble(API_TOKEN, apiTls)
  const accountDir = scratch.path("serviceaccount")
  const running: Array<RunningService> = []
  const operatorsOfThisTest: Array<RunningService> = []
  let controller: RunningService | undefined
  let client: ControllerClient | undefined
  const started = <A>(value: A | undefined): A => {
    if (value === undefined) throw new Error("the controller starts in beforeAll")
    return value
  }
  const setup: OperatorSetup = {
    scratch,
    apiTls,
    api,
    accountDir,
    running,
    get controller() {
      return started(controller)
    },
    get client() {
      return started(client)
    },
    operatorEnv: () => ({
      KUBERNETES_SERVICE_HOST: "127.0.0.1",
      KUBERNETES_SERVICE_PORT: new URL(api.apiBase()).port,
      SVC_OPERATOR_SERVICE_ACCOUNT_DIR: accountDir,
      SVC_CONTROLLER_ADDR: setup.controller.grpc ?? "",
      SVC_OPERATOR_LEASE_SECONDS: "2",
      SVC_OPERATOR_RESYNC_MS: "1000",
      SVC_LOG_LEVEL: "debug"
    }),
    startOperator: async (env) => {
      const service = await startService("svc-operator", { env: { ...setup.operatorEnv(), ...env } })
      running.push(service)
      operatorsOfThisTest.push(service)
      return service
    },
    eventsOf: (namespace, name) =>
      api
        .list("core", "events", namespace)
        .filter((event) => (event.involvedObject as { name: string }).name === name) as unknown as Array<{
        type: string
        reason: string
        message: string
      }>
  }

  afterEach(async (context) => {
    if (context.task.result?.state === "fail")
      for (const service of running) console.log(service.logs.map((line) => JSON.stringify(line)).join("\n"))
    for (const service of operatorsOfThisTest.splice(0)) await service.stop("SIGKILL")
  })

  beforeAll(async () => {
    mkdirSync(accountDir, { recursive: true })
    writeFileSync(`${accountDir}/token`, API_TOKEN)
    writeFileSync(`${accountDir}/namespace`, options.namespace)
    writeFileSync(`${accountDir}/ca.crt`, options.trustApi ? apiTls.cert : selfSignedCertificate().cert)
    options.prepare?.(scratch)
    scratch.write("tenants.json", options.tenants(scratch))
    controller = await startController(controllerEnv(scratch))
    client = new ControllerClient(controller.grpc ?? "")
  }, 60_000)

  afterAll(async () => {
    for (const service of running) await service.stop("SIGKILL")
    await controller?.stop()
    client?.close()
    api.stop()
    scratch.remove()
  })
  return setup
}
