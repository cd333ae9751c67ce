/**
 * Default listen ports of each service: distinct, so a server, a controller and a node start
 * side by side on one machine with no address set, and the node (and the `svc` client) find the
 * controller at its default gRPC port. SVC_HTTP_ADDR / SVC_GRPC_ADDR override them.
 */
export interface DefaultPorts {
  readonly http: number
  /** Services without a gRPC listener have none. */
  readonly grpc?: number
}

export const defaultPorts = {
  "svc-server": { http: 8080, grpc: 50051 },
  "svc-controller": { http: 8081, grpc: 50052 },
  "svc-node": { http: 8082 },
  // Loopback by default (modules/mcp): an assistant's local helper, not a network service.
  "svc-mcp": { http: 8090 }
} as const satisfies Readonly<Record<string, DefaultPorts>>

type Service = keyof typeof defaultPorts

const isService = (name: string): name is Service => Object.hasOwn(defaultPorts, name)

/** The default listen address of a service's HTTP or gRPC listener (all interfaces). */
export const defaultListenAddress = (service: string, transport: "http" | "grpc"): string => {
  const ports: DefaultPorts = isService(service) ? defaultPorts[service] : defaultPorts["svc-server"]
  return `0.0.0.0:${transport === "http" ? ports.http : (ports.grpc ?? defaultPorts["svc-server"].grpc)}`
}

/** Where the node and the `svc` client look for the controller by default (SVC_CONTROLLER_ADDR). */
export const defaultControllerAddress = `localhost:${defaultPorts["svc-controller"].grpc}`
