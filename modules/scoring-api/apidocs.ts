/**
 * /apidocs: Swagger UI rendering the embedded OpenAPI description. The UI's assets come from a
 * CDN at a version and base address fixed here; an air-gapped deployment mirrors that address
 * and rebuilds with `swaggerUiBase` changed (README, "svc-server"). The page names the spec URL
 * in plain HTML too, so it still says where the contract is when the CDN is unreachable.
 */
import spec from "../../schemas/openapi.json" with { type: "json" }

export const swaggerUiVersion = "5.32.4"
export const swaggerUiBase = `https://cdn.jsdelivr.net/npm/swagger-ui-dist@${swaggerUiVersion}`
export const specPath = "/apidocs/spec.json"

/** The OpenAPI 3.0.3 description (schemas/openapi.json), embedded at build time. */
export const openApiSpec = spec

export const apidocsPage = (tryItOut: boolean): string => {
  // Swagger UI's own switch: no submit methods, no "Try it out" button.
  const submitMethods = tryItOut ? ["get", "post"] : []
  const config = JSON.stringify({
    url: specPath,
    dom_id: "#swagger-ui",
    deepLinking: true,
    supportedSubmitMethods: submitMethods
  })
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>svc-server API</title>
<link rel="stylesheet" href="${swaggerUiBase}/swagger-ui.css">
</head>
<body>
<div id="swagger-ui">
<p id="apidocs-fallback">API description (OpenAPI 3.0.3): <a href="${specPath}">${specPath}</a>.
The interactive view loads its assets from <code>${swaggerUiBase}</code>.</p>
</div>
<script src="${swaggerUiBase}/swagger-ui-bundle.js"></script>
<script>
if (typeof SwaggerUIBundle === "function") {
  window.ui = SwaggerUIBundle(${config});
} else {
  document.getElementById("apidocs-fallback").insertAdjacentHTML("beforeend", " <strong>The interactive view could not load its assets; read the description at the link above.</strong>");
}
</script>
</body>
</html>
`
}
