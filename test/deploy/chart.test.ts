/**
 * The deployment chart (deploy/helm/svc) through real Helm: `helm lint` and `helm template` per
 * mode, every refusal of the controller contract's chart section with its message, the rendered
 * objects parsed and held to the rules (env per workload and mode, tenant-reader role bound to the
 * controller alone, network policy ports, token mounts), each validated against the Kubernetes
 * API schema of its kind, and each SvcTenant against the CRD's own openAPIV3Schema.
 */
import Ajv from "ajv"
import fc from "fast-check"
import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { parse } from "yaml"
import { chartDir, lint, type Manifest, namespace, release, render } from "../support/helm.ts"

type Container = {
  name: string
  env?: Array<{ name: string; value?: string; valueFrom?: unknown }>
  volumeMounts?: Array<{ name: string; mountPath: string }>
  securityContext?: Record<string, unknown>
  resources?: { requests?: Record<string, unknown> }
  livenessProbe?: { httpGet?: { path?: string } }
  readinessProbe?: { httpGet?: { path?: string } }
}
type PodSpec = {
  serviceAccountName?: string
  automountServiceAccountToken?: boolean
  securityContext?: Record<string, unknown>
  containers: Array<Container>
  volumes?: Array<{ name: string; secret?: { secretName: string } }>
}
type Workload = Manifest & {
  spec: { replicas?: number; template: { metadata?: { annotations?: Record<string, string> }; spec: PodSpec } }
}

const single = {
  controller: { enabled: true },
  auth: {
    enabled: true,
    jwksEndpoint: "https://idp.example/jwks",
    issuer: "https://idp.example",
    audience: "svc",
    tenantClaim: "org_id",
    scoringRoots: ["/media/{tenant}", "/shared"]
  },
  node: { controllerToken: "svc-node-token" }
}

const registry = {
  controller: { enabled: true },
  auth: {
    enabled: true,
    jwksEndpoint: "https://global.example/jwks",
    issuer: "https://global.example",
    audience: "svc",
    tenants: [
      {
        tenantId: "acme",
        oidc: { issuer: "https://acme.example", jwksEndpoint: "https://acme.example/jwks", tenantClaim: "org" },
        rbac: { defaultRole: "svc:reader", allowedRoles: ["svc:reader", "svc:writer", "svc:node"] },
        scoring: { roots: ["/media/acme"] }
      },
      { tenantId: "globex", enabled: false, scoring: { roots: ["/media/globex"] } }
    ]
  },
  node: { controllerToken: "svc-node-token" }
}

const orchestrator = {
  controller: { enabled: true },
  auth: { enabled: true, tenantSource: "orchestrator" },
  node: { controllerToken: "svc-node-token" }
}

const disabled = { controller: { enabled: true }, auth: { enabled: true, disabled: true } }

const rendered = (values: unknown): ReadonlyArray<Manifest> => {
  const result = render(values)
  if (!result.ok) throw new Error(`render failed: ${result.error}`)
  return result.manifests
}

const refusal = (values: unknown): string => {
  const result = render(values)
  if (result.ok) throw new Error("the render succeeded where it must fail")
  return result.error
}

const ofKind = (manifests: ReadonlyArray<Manifest>, kind: string) => manifests.filter((m) => m.kind === kind)
const workload = (manifests: ReadonlyArray<Manifest>, component: string): Workload | undefined =>
  ofKind(manifests, "Deployment").find((m) => m.metadata.name === `${release}-${component}`) as Workload | undefined
const mustWorkload = (manifests: ReadonlyArray<Manifest>, component: string): Workload => {
  const found = workload(manifests, component)
  if (found === undefined) throw new Error(`no ${component} Deployment`)
  return found
}
const envOf = (deployment: Workload): Record<string, string | undefined> =>
  Object.fromEntries(
    (deployment.spec.template.spec.containers[0]?.env ?? []).map((entry) => [entry.name, entry.value ?? "(from)"])
  )
const authVariables = (env: Record<string, unknown>) =>
  Object.keys(env).filter((name) => name.startsWith("SVC_AUTH_") || name.startsWith("SVC_JWKS_"))

// ---- validation of rendered objects against their schemas ----

const modelModule = (apiVersion: string): string => {
  const [group, version] = apiVersion.includes("/") ? apiVersion.split("/") : [undefined, apiVersion]
  return group === undefined ? `kubernetes-models/${version}` : `kubernetes-models/${group}/${version}`
}

/** Kubernetes API schema of the object's kind (kubernetes-models' generated validators). */
const validateBuiltIn = async (manifest: Manifest) => {
  const models = (await import(modelModule(manifest.apiVersion))) as Record<
    string,
    new (
      data: unknown
    ) => { validate(): void }
  >
  const Model = models[manifest.kind]
  if (Model === undefined) throw new Error(`no schema for ${manifest.apiVersion} ${manifest.kind}`)
  new Model(manifest).validate()
}

const crd = parse(readFileSync(new URL("../../schemas/svctenant.crd.yaml", import.meta.url), "utf8")) as {
  spec: { versions: Array<{ name: string; schema: { openAPIV3Schema: object } }> }
}
const tenantSchema = new Ajv({ strict: false, allErrors: true }).compile(
  crd.spec.versions.find((version) => version.name === "v1")?.schema.openAPIV3Schema ?? {}
)

type Rule = { apiGroups: Array<string>; resources: Array<string>; verbs: Array<string> }
const rulesOf = (manifest: Manifest): Array<Rule> => (manifest as { rules?: Array<Rule> }).rules ?? []
const operatorAccount = (values: ValuesShape) => `${values.serviceAccount?.name ?? "svc"}-operator`
const isOperatorRole = (manifest: Manifest) => manifest.metadata.name === `${release}-${namespace}-operator`

const validateAll = async (manifests: ReadonlyArray<Manifest>) => {
  for (const manifest of manifests) {
    if (manifest.kind === "SvcTenant") {
      expect(tenantSchema(manifest), JSON.stringify(tenantSchema.errors)).toBe(true)
    } else if (manifest.kind === "ServiceMonitor") {
      // A Prometheus-operator kind: kubernetes-models has no schema for it; its shape is asserted below.
      expect(manifest.apiVersion).toBe("monitoring.coreos.com/v1")
    } else {
      await validateBuiltIn(manifest)
    }
  }
}

// ---- rules every successful render obeys ----

const checkInvariants = (manifests: ReadonlyArray<Manifest>, values: ValuesShape) => {
  const server = workload(manifests, "server")
  const controller = workload(manifests, "controller")
  const node = workload(manifests, "node")
  if (server) {
    expect(authVariables(envOf(server))).toEqual([])
    expect(envOf(server).SVC_SCORING_ROOTS).toBeUndefined()
  }
  // Only the controller's account holds rights on tenant resources; the operator's role (issue 21)
  // grants nothing on them and is bound to the operator's account only.
  for (const binding of ofKind(manifests, "RoleBinding")) {
    const subjects = (binding as { subjects?: Array<{ name: string }> }).subjects ?? []
    const roleRef = (binding as { roleRef?: { name: string } }).roleRef
    expect(subjects.map((subject) => subject.name)).toEqual([
      roleRef?.name === `${release}-${namespace}-operator` || roleRef?.name === `${release}-operator-home`
        ? operatorAccount(values)
        : `${values.serviceAccount?.name ?? "svc"}-controller`
    ])
  }
  for (const role of [...ofKind(manifests, "Role"), ...ofKind(manifests, "ClusterRole")]) {
    if (isOperatorRole(role) || role.metadata.name === `${release}-operator-home`)
      for (const rule of rulesOf(role)) expect(rule.resources.filter((r) => r.startsWith("svctenant"))).toEqual([])
    if (isOperatorRole(role)) {
      expect(role.kind).toBe("ClusterRole")
      expect(ofKind(manifests, "ClusterRoleBinding")).toEqual([])
    } else if (role.metadata.name === `${release}-operator-home`) {
      expect(role.kind).toBe("Role")
      expect(role.metadata.namespace).toBe(namespace)
    } else {
      expect(role.metadata.name).toBe(`${release}-tenant-reader`)
    }
    // Lease and SvcNode rights (issue 34): only in a Role of the release namespace, never in the
    // ClusterRole that watched namespaces bind.
    const homeOnly = rulesOf(role).flatMap((rule) =>
      rule.resources.filter((resource) => resource.startsWith("leases") || resource.startsWith("svcnodes"))
    )
    if (homeOnly.length > 0) {
      expect(role.kind).toBe("Role")
      expect(role.metadata.namespace).toBe(namespace)
    }
  }
  // Every emptyDir is bounded (issue 34).
  for (const deployment of ofKind(manifests, "Deployment") as Array<Workload>) {
    for (const volume of (deployment.spec.template.spec.volumes ?? []) as Array<{ emptyDir?: { sizeLimit?: string } }>)
      if (volume.emptyDir !== undefined) expect(volume.emptyDir.sizeLimit).toMatch(/^\d+(Ki|Mi|Gi)$/)
  }
  // The operator, when there is one under network policies, has its own egress policy.
  const operatorWorkload = workload(manifests, "operator")
  if (operatorWorkload && values.networkPolicy?.enabled)
    expect(ofKind(manifests, "NetworkPolicy").map((policy) => policy.metadata.name)).toContain(
      `${release}-operator-egress`
    )
  for (const deployment of [server, node]) {
    if (deployment) expect(deployment.spec.template.spec.serviceAccountName).toBe(values.serviceAccount?.name ?? "svc")
  }
  if (controller) {
    expect(controller.spec.template.spec.serviceAccountName).toBe(`${values.serviceAccount?.name ?? "svc"}-controller`)
    const env = envOf(controller)
    const isRegistry = (values.auth?.tenants?.length ?? 0) > 0 || values.auth?.tenantSource === "orchestrator"
    if (isRegistry) {
      expect(env.SVC_AUTH_TENANTS_SOURCE).toBe("orchestrator")
      expect(env.SVC_AUTH_TENANTS_NAMESPACE).toBe(namespace)
      for (const global of ["SVC_JWKS_ENDPOINT", "SVC_AUTH_ISSUER", "SVC_AUTH_AUDIENCE", "SVC_AUTH_TENANT_CLAIM"])
        expect(env[global]).toBeUndefined()
      expect(env.SVC_SCORING_ROOTS).toBeUndefined()
    }
    if (values.auth?.disabled) expect(env.SVC_AUTH_DISABLED).toBe("true")
  } else {
    expect(ofKind(manifests, "SvcTenant")).toEqual([])
    expect(node).toBeUndefined()
  }
  // Security defaults on every workload.
  for (const deployment of ofKind(manifests, "Deployment") as Array<Workload>) {
    const pod = deployment.spec.template.spec
    expect(pod.securityContext?.runAsNonRoot).toBe(true)
    for (const container of pod.containers) {
      expect(container.securityContext).toMatchObject({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ["ALL"] }
      })
      expect(container.resources?.requests).toBeDefined()
      expect(container.livenessProbe?.httpGet?.path).toBe("/healthz")
      expect(container.readinessProbe?.httpGet?.path).toBe("/readyz")
    }
  }
}

type ValuesShape = {
  serviceAccount?: { name?: string }
  networkPolicy?: { enabled?: boolean }
  operator?: { enabled?: boolean; controllerToken?: string }
  auth?: { tenants?: ReadonlyArray<unknown>; tenantSource?: string; disabled?: boolean; enabled?: boolean }
}

describe("deployment chart: helm lint and template", () => {
  it("lints (strict) in every mode", () => {
    for (const values of [{}, single, registry, orchestrator, disabled, { networkPolicy: { enabled: true } }]) {
      const result = lint(values)
      expect(result.ok, result.output).toBe(true)
    }
  })

  it("defaults: the server alone, probes on the real paths, scrape annotations, no auth at all", async () => {
    const manifests = rendered({})
    expect(manifests.map((m) => `${m.kind}/${m.metadata.name}`).sort()).toEqual([
      "Deployment/svc-server",
      "Service/svc-server",
      "ServiceAccount/svc"
    ])
    const server = mustWorkload(manifests, "server")
    expect(server.spec.template.metadata?.annotations).toEqual({
      "prometheus.io/scrape": "true",
      "prometheus.io/path": "/metrics",
      "prometheus.io/port": "8080"
    })
    expect(server.spec.template.spec.automountServiceAccountToken).toBe(false)
    // Inputs confined to server.inputRoots (default /media), never the pod's whole file system.
    expect(envOf(server).SVC_INPUT_ROOTS).toBe("/media")
    const opened = mustWorkload(rendered({ server: { inputRoots: ["/", "/srv/clips"] } }), "server")
    expect(envOf(opened).SVC_INPUT_ROOTS).toBe("/,/srv/clips")
    checkInvariants(manifests, {})
    await validateAll(manifests)
    const crds = render({})
    expect(crds.ok && crds.crds.map((m) => m.metadata.name).sort()).toEqual([
      "svcjobs.svc.dev",
      "svcnodes.svc.dev",
      "svctenants.svc.dev"
    ])
  })

  it("single provider: the provider variables and roots on the controller only, the node's token mounted", async () => {
    const manifests = rendered(single)
    const controller = envOf(mustWorkload(manifests, "controller"))
    expect(controller).toMatchObject({
      SVC_JWKS_ENDPOINT: "https://idp.example/jwks",
      SVC_AUTH_ISSUER: "https://idp.example",
      SVC_AUTH_AUDIENCE: "svc",
      SVC_AUTH_TENANT_CLAIM: "org_id",
      SVC_AUTH_ROLES_CLAIM: "svc_roles",
      SVC_SCORING_ROOTS: "/media/{tenant},/shared",
      SVC_STORE_PATH: "/data/jobs.sqlite"
    })
    expect(controller.SVC_AUTH_TENANTS_SOURCE).toBeUndefined()
    const node = mustWorkload(manifests, "node")
    expect(envOf(node)).toMatchObject({
      SVC_CONTROLLER_ADDR: `${release}-controller:50051`,
      SVC_CONTROLLER_TOKEN_FILE: "/var/run/svc/controller-token/token"
    })
    expect(authVariables(envOf(node))).toEqual([])
    const pod = node.spec.template.spec
    expect(pod.volumes?.find((volume) => volume.name === "controller-token")?.secret?.secretName).toBe("svc-node-token")
    expect(pod.containers[0]?.volumeMounts).toContainEqual(
      expect.objectContaining({ name: "controller-token", mountPath: "/var/run/svc/controller-token" })
    )
    expect(ofKind(manifests, "PersistentVolumeClaim").map((m) => m.metadata.name)).toEqual([
      `${release}-controller-data`
    ])
    expect(ofKind(manifests, "Role")).toEqual([])
    expect(ofKind(manifests, "ServiceAccount").map((m) => m.metadata.name)).toEqual(["svc", "svc-controller"])
    checkInvariants(manifests, single)
    await validateAll(manifests)
  })

  it("registry mode: one SvcTenant per entry, missing oidc fields from auth.*, tenant-reader bound to the controller only", async () => {
    const manifests = rendered(registry)
    const tenants = ofKind(manifests, "SvcTenant") as Array<Manifest & { spec: Record<string, unknown> }>
    expect(tenants.map((t) => [t.metadata.name, t.metadata.namespace])).toEqual([
      [`${release}-acme`, namespace],
      [`${release}-globex`, namespace]
    ])
    expect(tenants[0]?.spec).toEqual({
      tenantId: "acme",
      enabled: true,
      oidc: {
        issuer: "https://acme.example",
        jwksEndpoint: "https://acme.example/jwks",
        audience: "svc",
        tenantClaim: "org",
        rolesClaim: "svc_roles"
      },
      rbac: { defaultRole: "svc:reader", allowedRoles: ["svc:reader", "svc:writer", "svc:node"] },
      scoring: { roots: ["/media/acme"] }
    })
    expect(tenants[1]?.spec).toEqual({
      tenantId: "globex",
      enabled: false,
      oidc: {
        issuer: "https://global.example",
        jwksEndpoint: "https://global.example/jwks",
        audience: "svc",
        tenantClaim: "tid",
        rolesClaim: "svc_roles"
      },
      scoring: { roots: ["/media/globex"] }
    })
    const role = ofKind(manifests, "Role")[0] as Manifest & { rules: unknown }
    expect(role.metadata).toMatchObject({ name: `${release}-tenant-reader`, namespace })
    expect(role.rules).toEqual([{ apiGroups: ["svc.dev"], resources: ["svctenants"], verbs: ["get", "list", "watch"] }])
    const binding = ofKind(manifests, "RoleBinding")[0] as Manifest & { subjects: unknown; roleRef: unknown }
    expect(binding.subjects).toEqual([{ kind: "ServiceAccount", name: "svc-controller", namespace }])
    expect(binding.roleRef).toEqual({
      apiGroup: "rbac.authorization.k8s.io",
      kind: "Role",
      name: `${release}-tenant-reader`
    })
    expect(mustWorkload(manifests, "controller").spec.template.spec.automountServiceAccountToken).toBe(true)
    checkInvariants(manifests, registry)
    await validateAll(manifests)
  })

  it("orchestrator source: registry variables and the tenant-reader role, no SvcTenant from the chart", async () => {
    const manifests = rendered(orchestrator)
    expect(ofKind(manifests, "SvcTenant")).toEqual([])
    expect(envOf(mustWorkload(manifests, "controller"))).toMatchObject({
      SVC_AUTH_TENANTS_SOURCE: "orchestrator",
      SVC_AUTH_TENANTS_NAMESPACE: namespace
    })
    expect(ofKind(manifests, "RoleBinding")).toHaveLength(1)
    checkInvariants(manifests, orchestrator)
    await validateAll(manifests)
  })

  it("disabled mode and PostgreSQL: SVC_AUTH_DISABLED, no token required, the store URL from its secret", async () => {
    const values = {
      ...disabled,
      controller: { enabled: true, replicas: 3 },
      store: { postgres: { enabled: true, urlSecret: { name: "pg" }, passwordSecret: { name: "pg-password" } } }
    }
    const manifests = rendered(values)
    const controller = mustWorkload(manifests, "controller")
    expect(controller.spec.replicas).toBe(3)
    const env = controller.spec.template.spec.containers[0]?.env ?? []
    expect(env.find((entry) => entry.name === "SVC_STORE_URL")?.valueFrom).toEqual({
      secretKeyRef: { name: "pg", key: "url" }
    })
    expect(envOf(controller)).toMatchObject({
      SVC_AUTH_DISABLED: "true",
      SVC_STORE_PASSWORD_FILE: "/var/run/svc/store-password/password"
    })
    expect(envOf(controller).SVC_STORE_PATH).toBeUndefined()
    expect(ofKind(manifests, "PersistentVolumeClaim")).toEqual([])
    expect(envOf(mustWorkload(manifests, "node")).SVC_CONTROLLER_TOKEN_FILE).toBeUndefined()
    checkInvariants(manifests, values)
    await validateAll(manifests)
  })

  it("network policy: the orchestrator API on 443 and 6443, identity providers on 443 while auth is on", async () => {
    const manifests = rendered({ ...single, networkPolicy: { enabled: true } })
    const policies = ofKind(manifests, "NetworkPolicy") as Array<
      Manifest & { spec: { egress: Array<{ ports: Array<{ port: number }>; to?: unknown }> } }
    >
    const portsOf = (component: string) =>
      policies
        .find((policy) => policy.metadata.name === `${release}-${component}-egress`)
        ?.spec.egress.map((rule) => rule.ports.map((port) => port.port))
    expect(portsOf("server")).toEqual([
      [53, 53],
      [443, 6443]
    ])
    expect(portsOf("controller")).toEqual([[53, 53], [443, 6443], [443]])
    expect(portsOf("node")).toEqual([[53, 53], [443, 6443], [50051]])
    const off = rendered({
      ...single,
      networkPolicy: { enabled: true, allow: { serverToApiserver: false, controllerToIdentityProvider: false } }
    })
    const offPorts = (ofKind(off, "NetworkPolicy") as typeof policies).map((policy) =>
      policy.spec.egress.map((rule) => rule.ports.map((port) => port.port))
    )
    expect(offPorts).toEqual([[[53, 53]], [[53, 53]], [[53, 53], [50051]]])
    // Disabled mode: no identity provider to reach.
    const noAuth = rendered({ ...disabled, networkPolicy: { enabled: true } })
    const controllerPolicy = (ofKind(noAuth, "NetworkPolicy") as typeof policies).find((policy) =>
      policy.metadata.name.endsWith("controller-egress")
    )
    expect(controllerPolicy?.spec.egress.map((rule) => rule.ports.map((port) => port.port))).toEqual([
      [53, 53],
      [443, 6443]
    ])
    await validateAll(manifests)
  })

  it("operator: its own account, svcjobs and events in each watched namespace, svcnodes and leases at home only, the token mounted", async () => {
    const values = {
      ...single,
      operator: { enabled: true, controllerToken: "svc-operator-token", namespaces: ["batch"] }
    }
    expect(lint(values).ok, lint(values).output).toBe(true)
    const manifests = rendered(values)
    await validateAll(manifests)
    checkInvariants(manifests, values)
    const operator = mustWorkload(manifests, "operator")
    const pod = operator.spec.template.spec
    expect(pod.serviceAccountName).toBe("svc-operator")
    expect(pod.automountServiceAccountToken).toBe(true)
    const env = envOf(operator)
    expect(env.SVC_CONTROLLER_TOKEN_FILE).toBe("/var/run/svc/controller-token/token")
    expect(env.SVC_CONTROLLER_ADDR).toBe("svc-controller:50051")
    // A shared token serves one namespace: the one listed.
    expect(env.SVC_OPERATOR_NAMESPACES).toBe("batch")
    expect(env.SVC_OPERATOR_TENANT_TOKENS).toBeUndefined()
    expect(env.SVC_OPERATOR_IDENTITY).toBe("(from)")
    expect(authVariables(env)).toEqual([])
    expect(pod.volumes?.find((volume) => volume.name === "controller-token")?.secret?.secretName).toBe(
      "svc-operator-token"
    )
    const [role, ...others] = ofKind(manifests, "ClusterRole")
    expect(others).toEqual([])
    expect(role && rulesOf(role).map((rule) => [rule.apiGroups, rule.resources, rule.verbs])).toEqual([
      [["svc.dev"], ["svcjobs"], ["get", "list", "watch", "update", "patch"]],
      [["svc.dev"], ["svcjobs/status"], ["get", "update", "patch"]],
      [["", "events.k8s.io"], ["events"], ["create", "patch"]]
    ])
    const home = ofKind(manifests, "Role").find((entry) => entry.metadata.name === "svc-operator-home")
    expect(home?.metadata.namespace).toBe(namespace)
    expect(home && rulesOf(home).map((rule) => [rule.apiGroups, rule.resources, rule.verbs])).toEqual([
      [["svc.dev"], ["svcnodes"], ["get", "list", "watch", "create", "update", "patch", "delete"]],
      [["svc.dev"], ["svcnodes/status"], ["get", "update", "patch"]],
      [["coordination.k8s.io"], ["leases"], ["get", "list", "watch", "create", "update", "patch"]]
    ])
    const bindings = ofKind(manifests, "RoleBinding").filter((binding) => binding.metadata.name === "svc-operator")
    expect(bindings.map((binding) => binding.metadata.namespace).sort()).toEqual(["batch"])
    const homeBinding = ofKind(manifests, "RoleBinding").find(
      (binding) => binding.metadata.name === "svc-operator-home"
    )
    expect(homeBinding?.metadata.namespace).toBe(namespace)
    // No other workload runs under the operator's account, and it is not bound to the tenant reader.
    for (const deployment of ofKind(manifests, "Deployment") as Array<Workload>) {
      if (deployment !== operator) expect(deployment.spec.template.spec.serviceAccountName).not.toBe("svc-operator")
    }
    // Default: the release namespace only, no namespaces variable.
    const narrow = rendered({ ...disabled, operator: { enabled: true } })
    expect(envOf(mustWorkload(narrow, "operator")).SVC_OPERATOR_NAMESPACES).toBeUndefined()
    expect(
      ofKind(narrow, "RoleBinding")
        .filter((binding) => binding.metadata.name === "svc-operator")
        .map((binding) => binding.metadata.namespace)
    ).toEqual([namespace])
    expect(workload(rendered(single), "operator")).toBeUndefined()
  })

  it("operator tenants: a token secret per namespace mounted and mapped, extra namespaces watched without one", async () => {
    const values = {
      ...single,
      networkPolicy: { enabled: true },
      operator: {
        enabled: true,
        tenants: [
          { namespace: "acme", controllerToken: "acme-writer" },
          { namespace: "globex", controllerToken: "globex-writer", controllerTokenKey: "jwt" }
        ],
        namespaces: ["stray"]
      }
    }
    expect(lint(values).ok, lint(values).output).toBe(true)
    const manifests = rendered(values)
    await validateAll(manifests)
    checkInvariants(manifests, values)
    const operator = mustWorkload(manifests, "operator")
    const env = envOf(operator)
    expect(env.SVC_OPERATOR_TENANT_TOKENS).toBe(
      "acme=/var/run/svc/tenants/acme/token,globex=/var/run/svc/tenants/globex/jwt"
    )
    expect(env.SVC_OPERATOR_NAMESPACES).toBe("acme,globex,stray")
    expect(env.SVC_CONTROLLER_TOKEN_FILE).toBeUndefined()
    const pod = operator.spec.template.spec
    expect(pod.volumes?.map((volume) => [volume.name, volume.secret?.secretName])).toEqual([
      ["tenant-acme", "acme-writer"],
      ["tenant-globex", "globex-writer"]
    ])
    expect(pod.containers[0]?.volumeMounts?.map((mount) => mount.mountPath)).toEqual([
      "/var/run/svc/tenants/acme",
      "/var/run/svc/tenants/globex"
    ])
    expect(
      ofKind(manifests, "RoleBinding")
        .filter((binding) => binding.metadata.name === "svc-operator")
        .map((binding) => binding.metadata.namespace)
    ).toEqual(["acme", "globex", "stray"])
    // Egress of the operator: DNS, the orchestrator API, the controller's gRPC port; nothing else.
    const policy = ofKind(manifests, "NetworkPolicy").find((entry) => entry.metadata.name === "svc-operator-egress") as
      | (Manifest & {
          spec: { policyTypes: Array<string>; egress: Array<{ ports: Array<{ port: number }>; to?: unknown }> }
        })
      | undefined
    expect(policy?.spec.policyTypes).toEqual(["Egress"])
    expect(policy?.spec.egress.map((rule) => rule.ports.map((port) => port.port))).toEqual([
      [53, 53],
      [443, 6443],
      [50051]
    ])
    expect(policy?.spec.egress[2]?.to).toEqual([
      {
        podSelector: {
          matchLabels: {
            "app.kubernetes.io/name": "svc",
            "app.kubernetes.io/instance": release,
            "app.kubernetes.io/component": "controller"
          }
        }
      }
    ])
    const narrowed = rendered({ ...values, networkPolicy: { enabled: true, apiServerCIDRs: ["10.0.0.1/32"] } })
    const narrowedPolicy = ofKind(narrowed, "NetworkPolicy").find(
      (entry) => entry.metadata.name === "svc-operator-egress"
    ) as (Manifest & { spec: { egress: Array<{ to?: unknown }> } }) | undefined
    expect(narrowedPolicy?.spec.egress[1]?.to).toEqual([{ ipBlock: { cidr: "10.0.0.1/32" } }])
  })

  it("svc-server ingress policy: opt-in, pods of the release namespace by default, or the peers given", async () => {
    expect(ofKind(rendered({}), "NetworkPolicy")).toEqual([])
    const manifests = rendered({ networkPolicy: { serverIngress: { enabled: true } } })
    await validateAll(manifests)
    type Ingress = Manifest & {
      spec: { policyTypes: Array<string>; ingress: Array<{ from: unknown; ports: Array<{ port: number }> }> }
    }
    const [policy, ...rest] = ofKind(manifests, "NetworkPolicy") as Array<Ingress>
    expect(rest).toEqual([])
    expect(policy?.metadata.name).toBe("svc-server-ingress")
    expect(policy?.spec.policyTypes).toEqual(["Ingress"])
    expect(policy?.spec.ingress).toEqual([
      {
        from: [{ podSelector: {} }],
        ports: [
          { port: 8080, protocol: "TCP" },
          { port: 50051, protocol: "TCP" }
        ]
      }
    ])
    const from = [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "studio" } } }]
    const custom = rendered({ networkPolicy: { serverIngress: { enabled: true, from } } })
    expect((ofKind(custom, "NetworkPolicy")[0] as Ingress).spec.ingress[0]?.from).toEqual(from)
  })

  it("every emptyDir has a size limit", async () => {
    const manifests = rendered({
      ...single,
      controller: { enabled: true, persistence: { enabled: false, size: "2Gi" }, tmpSizeLimit: "64Mi" }
    })
    await validateAll(manifests)
    const limits = (ofKind(manifests, "Deployment") as Array<Workload>).flatMap((deployment) =>
      ((deployment.spec.template.spec.volumes ?? []) as Array<{ name: string; emptyDir?: { sizeLimit?: string } }>)
        .filter((volume) => volume.emptyDir !== undefined)
        .map((volume) => [deployment.metadata.name, volume.name, volume.emptyDir?.sizeLimit])
    )
    expect(limits).toEqual([
      ["svc-controller", "tmp", "64Mi"],
      ["svc-controller", "data", "2Gi"],
      ["svc-node", "tmp", "1Gi"],
      ["svc-server", "tmp", "1Gi"]
    ])
  })

  it("the memory budget stays inside each scoring workload's memory limit (SVC_MAX_SCORE_MEMORY)", async () => {
    // Defaults: half of the 4Gi limit, on the server, the controller and the node.
    const defaults = rendered({ ...single, server: { enabled: true } })
    await validateAll(defaults)
    for (const component of ["server", "controller", "node"])
      expect(envOf(mustWorkload(defaults, component)).SVC_MAX_SCORE_MEMORY, component).toBe(String(2 * 1024 ** 3))
    // A decimal limit, an explicit budget below its limit, and no limit at all (the service then
    // reads its cgroup's memory.max).
    const tuned = rendered({
      ...single,
      server: { resources: { limits: { memory: "3G" } } },
      controller: { enabled: true, maxScoreMemory: "1536Mi" },
      node: { ...single.node, resources: { limits: { memory: null } } }
    })
    await validateAll(tuned)
    expect(envOf(mustWorkload(tuned, "server")).SVC_MAX_SCORE_MEMORY).toBe("1500000000")
    expect(envOf(mustWorkload(tuned, "controller")).SVC_MAX_SCORE_MEMORY).toBe("1536Mi")
    expect(envOf(mustWorkload(tuned, "node")).SVC_MAX_SCORE_MEMORY).toBeUndefined()
  })

  it("two long tenantIds that share their first 59 characters get distinct SvcTenant names", async () => {
    const prefix = "a".repeat(59)
    const values = {
      ...registry,
      auth: { ...registry.auth, tenants: [{ tenantId: `${prefix}-one` }, { tenantId: `${prefix}-two` }] }
    }
    const manifests = rendered(values)
    await validateAll(manifests)
    const names = ofKind(manifests, "SvcTenant").map((tenant) => tenant.metadata.name)
    expect(new Set(names).size).toBe(2)
    for (const name of names) {
      expect(name.length).toBeLessThanOrEqual(63)
      expect(name).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/)
    }
    // A short one keeps its plain name.
    expect(ofKind(rendered(registry), "SvcTenant").map((tenant) => tenant.metadata.name)).toEqual([
      "svc-acme",
      "svc-globex"
    ])
  })

  it("optional PodDisruptionBudgets and ServiceMonitor", async () => {
    const manifests = rendered({
      ...single,
      podDisruptionBudget: { enabled: true },
      metrics: { serviceMonitor: { enabled: true } }
    })
    expect(ofKind(manifests, "PodDisruptionBudget").map((m) => m.metadata.name)).toEqual([
      `${release}-server`,
      `${release}-controller`,
      `${release}-node`
    ])
    const monitor = ofKind(manifests, "ServiceMonitor")[0] as Manifest & { spec: { endpoints: unknown } }
    expect(monitor.spec.endpoints).toEqual([{ port: "http", path: "/metrics", interval: "30s" }])
    await validateAll(manifests)
  })
})

/** Every refusal of the contract's chart section, with the value its message names. */
const refusals: ReadonlyArray<readonly [string, unknown, RegExp]> = [
  [
    "auth.enabled without controller.enabled",
    { auth: { enabled: true } },
    /auth\.enabled requires controller\.enabled/
  ],
  [
    "controller.enabled without auth.enabled",
    { controller: { enabled: true } },
    /controller\.enabled requires auth\.enabled/
  ],
  [
    "auth.tenants without auth.enabled",
    { auth: { tenants: [{ tenantId: "a" }] } },
    /auth\.tenants requires auth\.enabled/
  ],
  [
    "auth.tenantSource without auth.enabled",
    { auth: { tenantSource: "orchestrator" } },
    /auth\.tenantSource "orchestrator" requires auth\.enabled/
  ],
  [
    "auth.disabled with a registry",
    { controller: { enabled: true }, auth: { enabled: true, disabled: true, tenantSource: "orchestrator" } },
    /auth\.disabled cannot be combined with a tenant registry/
  ],
  [
    "auth.scoringRoots next to a registry",
    { ...orchestrator, auth: { ...orchestrator.auth, scoringRoots: ["/media"] } },
    /auth\.scoringRoots cannot be combined with a tenant registry/
  ],
  [
    "auth.scoringRoots without auth.enabled",
    { auth: { scoringRoots: ["/media"] } },
    /auth\.scoringRoots requires auth\.enabled/
  ],
  ["env.SVC_AUTH_*", { env: { SVC_AUTH_DISABLED: "true" } }, /env\.SVC_AUTH_DISABLED is refused/],
  ["env.SVC_JWKS_*", { env: { SVC_JWKS_ENDPOINT: "https://x" } }, /env\.SVC_JWKS_ENDPOINT is refused/],
  [
    "controller.env.SVC_AUTH_*",
    { ...single, controller: { enabled: true, env: { SVC_AUTH_ISSUER: "https://x" } } },
    /controller\.env\.SVC_AUTH_ISSUER is refused/
  ],
  [
    "controller.env.SVC_JWKS_*",
    { ...single, controller: { enabled: true, env: { SVC_JWKS_ENDPOINT: "https://x" } } },
    /controller\.env\.SVC_JWKS_ENDPOINT is refused/
  ],
  [
    "controller.env.SVC_SCORING_ROOTS",
    { ...single, controller: { enabled: true, env: { SVC_SCORING_ROOTS: "/" } } },
    /controller\.env\.SVC_SCORING_ROOTS is refused/
  ],
  [
    "an entry with no issuer, own or global",
    { ...orchestrator, auth: { enabled: true, jwksEndpoint: "https://g/jwks", tenants: [{ tenantId: "a" }] } },
    /auth\.tenants\[0\] \(a\): no issuer/
  ],
  [
    "an entry with no JWKS endpoint, own or global",
    { ...orchestrator, auth: { enabled: true, tenants: [{ tenantId: "b", oidc: { issuer: "https://b" } }] } },
    /auth\.tenants\[0\] \(b\): no JWKS endpoint/
  ],
  [
    "an entry with an empty rbac.allowedRoles",
    { ...registry, auth: { ...registry.auth, tenants: [{ tenantId: "c", rbac: { allowedRoles: [] } }] } },
    /auth\.tenants\[0\] \(c\): rbac\.allowedRoles is empty/
  ],
  [
    "a server image.repository naming a controller image",
    { image: { repository: "registry.example/svc-controller" } },
    /image\.repository "registry\.example\/svc-controller" names a controller image/
  ],
  [
    "controller.replicas above 1 on SQLite",
    { ...single, controller: { enabled: true, replicas: 2 } },
    /controller\.replicas 2 requires store\.postgres\.enabled/
  ],
  [
    "SVC_INPUT_ROOTS in the server's env",
    { env: { SVC_INPUT_ROOTS: "/" } },
    /env\.SVC_INPUT_ROOTS is refused: set server\.inputRoots/
  ],
  ["no input root (schema)", { server: { inputRoots: [] } }, /inputRoots/],
  ["a relative input root (schema)", { server: { inputRoots: ["media"] } }, /inputRoots/],
  ["an unknown key (schema)", { serverr: {} }, /additional properties 'serverr' not allowed/],
  ["a wrong type (schema)", { controller: { enabled: "yes" } }, /controller\/enabled|got string, want boolean/],
  [
    "an unknown role (schema)",
    { auth: { tenants: [{ tenantId: "a", rbac: { allowedRoles: ["svc:root"] } }] } },
    /svc:root|allowedRoles/
  ],
  [
    "defaultRole svc:node (schema, as the SvcTenant definition)",
    {
      ...registry,
      auth: {
        ...registry.auth,
        tenants: [{ tenantId: "a", rbac: { defaultRole: "svc:node", allowedRoles: ["svc:reader", "svc:node"] } }]
      }
    },
    /defaultRole/
  ],
  [
    "a defaultRole outside allowedRoles (the SvcTenant definition's rule)",
    {
      ...registry,
      auth: {
        ...registry.auth,
        tenants: [{ tenantId: "a", rbac: { defaultRole: "svc:admin", allowedRoles: ["svc:reader"] } }]
      }
    },
    /auth\.tenants\[0\] \(a\): rbac\.defaultRole svc:admin is not in rbac\.allowedRoles/
  ],
  [
    "a plain-http JWKS endpoint off loopback (schema, as the SvcTenant definition)",
    {
      ...registry,
      auth: {
        ...registry.auth,
        tenants: [{ tenantId: "a", oidc: { issuer: "https://a.example", jwksEndpoint: "http://a.example/jwks" } }]
      }
    },
    /jwksEndpoint/
  ],
  [
    "a tenantId over 63 characters (schema)",
    { ...registry, auth: { ...registry.auth, tenants: [{ tenantId: "a".repeat(64) }] } },
    /tenantId/
  ],
  [
    "a shared operator token with several namespaces",
    { ...single, operator: { enabled: true, controllerToken: "op", namespaces: ["acme", "globex"] } },
    /operator\.controllerToken is one tenant's token: an operator watching several namespaces \(operator\.namespaces: acme, globex\) needs operator\.tenants/
  ],
  [
    "a shared operator token next to operator.tenants",
    {
      ...single,
      operator: { enabled: true, controllerToken: "op", tenants: [{ namespace: "acme", controllerToken: "a" }] }
    },
    /operator\.controllerToken and operator\.tenants: give one or the other/
  ],
  [
    "a namespace listed twice in operator.tenants",
    {
      ...single,
      operator: {
        enabled: true,
        tenants: [
          { namespace: "acme", controllerToken: "a" },
          { namespace: "acme", controllerToken: "b" }
        ]
      }
    },
    /operator\.tenants\[1\]: namespace "acme" is listed twice/
  ],
  [
    "an operator tenant without its token secret (schema)",
    { ...single, operator: { enabled: true, tenants: [{ namespace: "acme" }] } },
    /controllerToken/
  ],
  ["an emptyDir size that is not a quantity (schema)", { server: { tmpSizeLimit: "lots" } }, /tmpSizeLimit/],
  [
    "a memory budget not below the workload's memory limit",
    { ...single, node: { ...single.node, maxScoreMemory: "4Gi" } },
    /node\.maxScoreMemory 4Gi is not below node\.resources\.limits\.memory 4Gi/
  ],
  ["a memory budget that is not a byte size (schema)", { server: { maxScoreMemory: "2GB" } }, /maxScoreMemory/],
  [
    "SVC_MAX_SCORE_MEMORY in an env map",
    { env: { SVC_MAX_SCORE_MEMORY: "1Gi" } },
    /env\.SVC_MAX_SCORE_MEMORY is refused/
  ],
  [
    "a memory limit the chart cannot read",
    { server: { resources: { limits: { memory: "1.5Gi" } } } },
    /server\.resources\.limits\.memory "1\.5Gi" is not a whole number of bytes/
  ]
]

describe("deployment chart: refusals", () => {
  it.each(refusals)("refuses %s", (_, values, message) => {
    expect(refusal(values)).toMatch(message)
  })

  it("refuses an operator without the controller, or without its token while authentication is on", () => {
    expect(refusal({ operator: { enabled: true, controllerToken: "op" } })).toMatch(
      /operator\.enabled requires controller\.enabled/
    )
    expect(refusal({ ...single, operator: { enabled: true } })).toMatch(
      /operator\.controllerToken .* is required while authentication is on/
    )
    expect(refusal({ ...disabled, operator: { enabled: true, namespaces: ["Not_A_Namespace"] } })).toMatch(/namespaces/)
    expect(rendered({ operator: { enabled: false, controllerToken: "op" } }).length).toBeGreaterThan(0)
  })
})

/** The messages a render may fail with: the contract's refusals and the schema's. */
const knownFailures = [
  /requires controller\.enabled/,
  /requires auth\.enabled/,
  /cannot be combined with a tenant registry/,
  /is refused/,
  /no issuer|no JWKS endpoint|rbac\.allowedRoles is empty/,
  /names a controller image/,
  /requires store\.postgres\.enabled/,
  /single-provider mode needs auth\.jwksEndpoint and auth\.issuer/,
  /node\.controllerToken .* is required while authentication is on/,
  /operator\.enabled requires controller\.enabled/,
  /operator\.controllerToken .* is required while authentication is on/,
  /operator\.controllerToken is one tenant's token/,
  /operator\.controllerToken and operator\.tenants: give one or the other/,
  /is not in rbac\.allowedRoles/
]

describe("deployment chart: random values", () => {
  it("every render fails with a known message or obeys every rule", async () => {
    const tenant = fc.record(
      {
        tenantId: fc.constantFrom("acme", "globex", "initech"),
        enabled: fc.boolean(),
        oidc: fc.record(
          { issuer: fc.constant("https://t.example"), jwksEndpoint: fc.constant("https://t.example/jwks") },
          { requiredKeys: [] }
        ),
        rbac: fc.record(
          { allowedRoles: fc.subarray(["svc:reader", "svc:writer", "svc:admin", "svc:node"] as const) },
          { requiredKeys: [] }
        )
      },
      { requiredKeys: ["tenantId"] }
    )
    const values = fc.record(
      {
        controller: fc.record(
          {
            enabled: fc.boolean(),
            replicas: fc.integer({ min: 1, max: 3 }),
            env: fc.constantFrom({}, { SVC_LOG_LEVEL: "debug" }, { SVC_SCORING_ROOTS: "/x" })
          },
          { requiredKeys: [] }
        ),
        auth: fc.record(
          {
            enabled: fc.boolean(),
            disabled: fc.boolean(),
            jwksEndpoint: fc.constantFrom("", "https://g.example/jwks"),
            issuer: fc.constantFrom("", "https://g.example"),
            scoringRoots: fc.constantFrom([], ["/media/{tenant}"]),
            tenants: fc.uniqueArray(tenant, { maxLength: 2, selector: (t) => t.tenantId }),
            tenantSource: fc.constantFrom("", "orchestrator")
          },
          { requiredKeys: [] }
        ),
        env: fc.constantFrom({}, { SVC_LOG_LEVEL: "debug" }, { SVC_JWKS_ENDPOINT: "https://x" }),
        node: fc.record({ controllerToken: fc.constantFrom("", "node-token") }, { requiredKeys: [] }),
        operator: fc.record(
          {
            enabled: fc.boolean(),
            controllerToken: fc.constantFrom("", "operator-token"),
            tenants: fc.constantFrom(
              [],
              [{ namespace: "acme", controllerToken: "acme-writer" }],
              [
                { namespace: "acme", controllerToken: "acme-writer" },
                { namespace: "globex", controllerToken: "globex-writer" }
              ]
            ),
            namespaces: fc.constantFrom([], ["batch"], ["media", "batch"])
          },
          { requiredKeys: [] }
        ),
        networkPolicy: fc.record(
          { enabled: fc.boolean(), serverIngress: fc.record({ enabled: fc.boolean() }) },
          { requiredKeys: [] }
        ),
        store: fc.record(
          { postgres: fc.record({ enabled: fc.boolean(), urlSecret: fc.constant({ name: "pg" }) }) },
          { requiredKeys: [] }
        )
      },
      { requiredKeys: [] }
    )
    await fc.assert(
      fc.asyncProperty(values, async (generated) => {
        const result = render(generated)
        if (!result.ok) {
          expect(
            knownFailures.some((message) => message.test(result.error)),
            result.error
          ).toBe(true)
          return
        }
        checkInvariants(result.manifests, generated)
        await validateAll(result.manifests)
      }),
      { numRuns: 40 }
    )
  }, 180_000)
})

describe("deployment chart: files", () => {
  it.each(["svctenant", "svcjob", "svcnode"])("ships the %s definition from schemas/ unchanged", (name) => {
    expect(readFileSync(`${chartDir}/crds/${name}.crd.yaml`, "utf8")).toBe(
      readFileSync(new URL(`../../schemas/${name}.crd.yaml`, import.meta.url), "utf8")
    )
  })
})
