/** Server, controller and node start side by side with their defaults, and the node finds the controller. */
import { describe, expect, it } from "vitest"
import { defaultControllerAddress, defaultListenAddress, defaultPorts } from "./ports.ts"

describe("default ports", () => {
  it("are distinct across the services and transports", () => {
    const ports = Object.values(defaultPorts).flatMap((entry) => Object.values(entry))
    expect(new Set(ports).size).toBe(ports.length)
  })

  it("send the node (and svc) to the controller's default gRPC port", () => {
    expect(defaultControllerAddress).toBe(`localhost:${defaultPorts["svc-controller"].grpc}`)
    expect(defaultListenAddress("svc-controller", "grpc")).toBe(`0.0.0.0:${defaultPorts["svc-controller"].grpc}`)
  })

  it("keep the scoring server on 8080 (the reference setup) and gRPC 50051", () => {
    expect(defaultListenAddress("svc-server", "http")).toBe("0.0.0.0:8080")
    expect(defaultListenAddress("svc-server", "grpc")).toBe("0.0.0.0:50051")
    expect(defaultListenAddress("svc-node", "http")).toBe("0.0.0.0:8082")
  })
})
