/** URL rules shared by the single-provider settings and the tenant resources. */

/** `localhost` and loopback addresses: the only hosts plain http may reach. */
export const isLoopbackHost = (hostname: string): boolean => {
  const host = hostname.toLowerCase().replace(/^\[|\]$/g, "")
  return host === "localhost" || host.endsWith(".localhost") || /^127(\.\d{1,3}){3}$/.test(host) || host === "::1"
}

const parsed = (text: string): URL | undefined => {
  try {
    return new URL(text)
  } catch {
    return undefined
  }
}

/** Why an issuer is not an absolute http(s) URL, or undefined. */
export const issuerProblem = (text: string): string | undefined => {
  const url = parsed(text)
  return url !== undefined && (url.protocol === "https:" || url.protocol === "http:") && url.hostname !== ""
    ? undefined
    : "must be an absolute http(s) URL"
}

/** Why a JWKS endpoint is refused (seed 2.4: https; http only for localhost/loopback), or undefined. */
export const jwksEndpointProblem = (text: string): string | undefined => {
  const url = parsed(text)
  if (url === undefined || url.hostname === "") return "must be an absolute https URL"
  if (url.protocol === "https:") return undefined
  if (url.protocol === "http:" && isLoopbackHost(url.hostname)) return undefined
  return "must be an https URL (plain http only for localhost or loopback addresses)"
}
