{{/* Names and labels. */}}
{{- define "svc.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "svc.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "svc.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "svc.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* Selector labels of one component: pass (dict "root" $ "component" "server"). */}}
{{- define "svc.selectorLabels" -}}
app.kubernetes.io/name: {{ include "svc.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "svc.image" -}}
{{- printf "%s:%s" .image.repository (default .root.Chart.AppVersion .image.tag) -}}
{{- end -}}

{{/* The account shared by server, node and job pods; the controller's is <name>-controller. */}}
{{- define "svc.sharedAccount" -}}{{ .Values.serviceAccount.name }}{{- end -}}
{{- define "svc.operatorAccount" -}}{{ printf "%s-operator" .Values.serviceAccount.name }}{{- end -}}
{{- define "svc.controllerAccount" -}}{{ printf "%s-controller" .Values.serviceAccount.name }}{{- end -}}

{{/* Registry mode: tenants listed in the values, or resources managed outside the chart. */}}
{{- define "svc.registry" -}}
{{- if or (gt (len .Values.auth.tenants) 0) (eq .Values.auth.tenantSource "orchestrator") -}}true{{- end -}}
{{- end -}}

{{/* Authentication is on: the gateway verifies tokens (not disabled mode). */}}
{{- define "svc.authOn" -}}
{{- if and .Values.controller.enabled .Values.auth.enabled (not .Values.auth.disabled) -}}true{{- end -}}
{{- end -}}

{{- define "svc.podSecurity" -}}
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- end -}}

{{/* Pod annotations for metrics scraping: pass (dict "root" $ "port" 8080). */}}
{{- define "svc.scrapeAnnotations" -}}
{{- if .root.Values.metrics.podAnnotations }}
annotations:
  prometheus.io/scrape: "true"
  prometheus.io/path: /metrics
  prometheus.io/port: {{ .port | quote }}
{{- end }}
{{- end -}}

{{/* Liveness and readiness probes on the real paths of every svc executable. */}}
{{- define "svc.probes" -}}
livenessProbe:
  httpGet: { path: /healthz, port: http }
  periodSeconds: 10
readinessProbe:
  httpGet: { path: /readyz, port: http }
  periodSeconds: 5
{{- end -}}

{{/*
Refusals of the controller contract (deployment values). Each names the offending value.
*/}}
{{- define "svc.validate" -}}
{{- $v := .Values -}}
{{- $registry := include "svc.registry" . -}}
{{- if and $v.auth.enabled (not $v.controller.enabled) -}}
{{- fail "auth.enabled requires controller.enabled: authentication belongs to the controller workload" -}}
{{- end -}}
{{- if and $v.controller.enabled (not $v.auth.enabled) -}}
{{- fail "controller.enabled requires auth.enabled (set auth.disabled for a test deployment without tokens)" -}}
{{- end -}}
{{- if and (gt (len $v.auth.tenants) 0) (not $v.auth.enabled) -}}
{{- fail "auth.tenants requires auth.enabled" -}}
{{- end -}}
{{- if and $v.auth.tenantSource (not $v.auth.enabled) -}}
{{- fail (printf "auth.tenantSource %q requires auth.enabled" $v.auth.tenantSource) -}}
{{- end -}}
{{- if and $v.auth.disabled $registry -}}
{{- fail "auth.disabled cannot be combined with a tenant registry (auth.tenants or auth.tenantSource)" -}}
{{- end -}}
{{- if gt (len $v.auth.scoringRoots) 0 -}}
{{- if $registry -}}
{{- fail "auth.scoringRoots cannot be combined with a tenant registry: each tenant's roots are its scoring.roots" -}}
{{- end -}}
{{- if not $v.auth.enabled -}}
{{- fail "auth.scoringRoots requires auth.enabled" -}}
{{- end -}}
{{- end -}}
{{- range $name, $_ := $v.env -}}
{{- if or (hasPrefix "SVC_AUTH_" $name) (hasPrefix "SVC_JWKS_" $name) -}}
{{- fail (printf "env.%s is refused: the server takes no auth settings" $name) -}}
{{- end -}}
{{- if eq "SVC_INPUT_ROOTS" $name -}}
{{- fail "env.SVC_INPUT_ROOTS is refused: set server.inputRoots" -}}
{{- end -}}
{{- end -}}
{{- range $name, $_ := $v.controller.env -}}
{{- if or (hasPrefix "SVC_AUTH_" $name) (hasPrefix "SVC_JWKS_" $name) (eq "SVC_SCORING_ROOTS" $name) -}}
{{- fail (printf "controller.env.%s is refused: set authentication through auth.*" $name) -}}
{{- end -}}
{{- end -}}
{{- range $i, $t := $v.auth.tenants -}}
{{- $oidc := $t.oidc | default dict -}}
{{- if not (or $oidc.issuer $v.auth.issuer) -}}
{{- fail (printf "auth.tenants[%d] (%s): no issuer (oidc.issuer or auth.issuer)" $i $t.tenantId) -}}
{{- end -}}
{{- if not (or $oidc.jwksEndpoint $v.auth.jwksEndpoint) -}}
{{- fail (printf "auth.tenants[%d] (%s): no JWKS endpoint (oidc.jwksEndpoint or auth.jwksEndpoint)" $i $t.tenantId) -}}
{{- end -}}
{{- $rbac := $t.rbac | default dict -}}
{{- if and (hasKey $rbac "allowedRoles") (eq (len $rbac.allowedRoles) 0) -}}
{{- fail (printf "auth.tenants[%d] (%s): rbac.allowedRoles is empty" $i $t.tenantId) -}}
{{- end -}}
{{- end -}}
{{- if regexMatch "(^|/)svc-controller(:|@|$)" $v.image.repository -}}
{{- fail (printf "image.repository %q names a controller image: the server workload runs svc-server" $v.image.repository) -}}
{{- end -}}
{{- if and $v.controller.enabled (gt (int $v.controller.replicas) 1) (not $v.store.postgres.enabled) -}}
{{- fail (printf "controller.replicas %d requires store.postgres.enabled: the SQLite store serves one replica" (int $v.controller.replicas)) -}}
{{- end -}}
{{- if and $v.store.postgres.enabled (not $v.store.postgres.urlSecret.name) -}}
{{- fail "store.postgres.enabled requires store.postgres.urlSecret.name" -}}
{{- end -}}
{{- if and (include "svc.authOn" .) (not $registry) (or (not $v.auth.jwksEndpoint) (not $v.auth.issuer)) -}}
{{- fail "single-provider mode needs auth.jwksEndpoint and auth.issuer (or auth.tenants / auth.tenantSource for a registry)" -}}
{{- end -}}
{{- if and (include "svc.authOn" .) $v.node.enabled (gt (int $v.node.replicas) 0) (not $v.node.controllerToken) -}}
{{- fail "node.controllerToken (a secret holding an svc:node token) is required while authentication is on" -}}
{{- end -}}
{{- if and $v.operator.enabled (not $v.controller.enabled) -}}
{{- fail "operator.enabled requires controller.enabled: svc-operator submits to the controller" -}}
{{- end -}}
{{- if and (include "svc.authOn" .) $v.operator.enabled (not $v.operator.controllerToken) -}}
{{- fail "operator.controllerToken (a secret holding an svc:writer token) is required while authentication is on" -}}
{{- end -}}
{{- end -}}
