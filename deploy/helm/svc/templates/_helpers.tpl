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

{{/*
The namespaces svc-operator watches, as a JSON list: those of operator.tenants and
operator.namespaces; none given, the release namespace.
*/}}
{{- define "svc.operatorNamespaces" -}}
{{- $listed := list -}}
{{- range .Values.operator.tenants }}{{ $listed = append $listed .namespace }}{{ end -}}
{{- $listed = concat $listed .Values.operator.namespaces | uniq -}}
{{- if eq (len $listed) 0 }}{{ $listed = list .Release.Namespace }}{{ end -}}
{{- toJson $listed -}}
{{- end -}}

{{/* SVC_OPERATOR_TENANT_TOKENS: namespace=token file, one per operator.tenants entry. */}}
{{- define "svc.operatorTenantTokens" -}}
{{- $entries := list -}}
{{- range .Values.operator.tenants -}}
{{- $entries = append $entries (printf "%s=/var/run/svc/tenants/%s/%s" .namespace .namespace (.controllerTokenKey | default "token")) -}}
{{- end -}}
{{- join "," $entries -}}
{{- end -}}

{{/*
A resource name of at most 63 characters: kept whole when it fits, else cut and given the first
8 hex digits of the whole name's SHA-256, so two long names that share a prefix never meet.
*/}}
{{- define "svc.boundedName" -}}
{{- if le (len .) 63 -}}
{{- . -}}
{{- else -}}
{{- printf "%s-%s" (trunc 54 . | trimSuffix "-") (sha256sum . | trunc 8) -}}
{{- end -}}
{{- end -}}

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
{{- range $component := list "env" "controller.env" "node.env" -}}
{{- $env := ternary $v.env (ternary $v.controller.env $v.node.env (eq $component "controller.env")) (eq $component "env") -}}
{{- if hasKey ($env | default dict) "SVC_MAX_SCORE_MEMORY" -}}
{{- fail (printf "%s.SVC_MAX_SCORE_MEMORY is refused: set maxScoreMemory of the workload (it is kept below its memory limit)" $component) -}}
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
{{- /* The SvcTenant definition's rule: the default role is one of the allowed roles. */ -}}
{{- $allowed := $rbac.allowedRoles | default (list "svc:reader" "svc:writer") -}}
{{- $default := $rbac.defaultRole | default "svc:reader" -}}
{{- if not (has $default $allowed) -}}
{{- fail (printf "auth.tenants[%d] (%s): rbac.defaultRole %s is not in rbac.allowedRoles" $i $t.tenantId $default) -}}
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
{{- if and (include "svc.authOn" .) $v.operator.enabled (not $v.operator.controllerToken) (not $v.operator.tenants) -}}
{{- fail "operator.tenants (a secret per namespace holding its tenant's svc:writer token) or operator.controllerToken (one namespace) is required while authentication is on" -}}
{{- end -}}
{{- if and $v.operator.controllerToken $v.operator.tenants -}}
{{- fail "operator.controllerToken and operator.tenants: give one or the other (operator.tenants holds a token per namespace)" -}}
{{- end -}}
{{- $watched := include "svc.operatorNamespaces" . | fromJsonArray -}}
{{- if and $v.operator.controllerToken (gt (len $watched) 1) -}}
{{- fail (printf "operator.controllerToken is one tenant's token: an operator watching several namespaces (operator.namespaces: %s) needs operator.tenants, a token per namespace" (join ", " $watched)) -}}
{{- end -}}
{{- $seen := dict -}}
{{- range $i, $t := $v.operator.tenants -}}
{{- if hasKey $seen $t.namespace -}}
{{- fail (printf "operator.tenants[%d]: namespace %q is listed twice" $i $t.namespace) -}}
{{- end -}}
{{- $_ := set $seen $t.namespace true -}}
{{- end -}}
{{- end -}}

{{- /*
Bytes of a Kubernetes memory quantity in the forms the chart accepts (a whole number, with an
optional binary suffix Ki/Mi/Gi/Ti or decimal k/M/G/T); fails naming `what` otherwise.
*/ -}}
{{- define "svc.bytes" -}}
{{- $text := toString .value -}}
{{- if not (regexMatch "^[0-9]+(Ki|Mi|Gi|Ti|k|M|G|T)?$" $text) -}}
{{- fail (printf "%s %q is not a whole number of bytes with an optional Ki, Mi, Gi, Ti, k, M, G or T suffix" .what $text) -}}
{{- end -}}
{{- $units := dict "" 1 "Ki" 1024 "Mi" 1048576 "Gi" 1073741824 "Ti" 1099511627776 "k" 1000 "M" 1000000 "G" 1000000000 "T" 1000000000000 -}}
{{- mul (atoi (regexFind "^[0-9]+" $text)) (get $units (regexReplaceAll "^[0-9]+" $text "")) -}}
{{- end -}}

{{- /*
SVC_MAX_SCORE_MEMORY of a scoring workload (server, controller, node), kept inside the
container's memory limit: `maxScoreMemory` as given (refused unless below the limit), else half
the limit (room for the process itself, the decoders' unestimated bytes and the page cache).
Without a memory limit nothing is set: the service then takes half its cgroup's or host's memory.
*/ -}}
{{- define "svc.maxScoreMemoryEnv" -}}
{{- $limits := (.values.resources | default dict).limits | default dict -}}
{{- $limit := "" -}}
{{- if $limits.memory -}}
{{- $limit = include "svc.bytes" (dict "value" $limits.memory "what" (printf "%s.resources.limits.memory" .name)) -}}
{{- end -}}
{{- $value := "" -}}
{{- if .values.maxScoreMemory -}}
{{- if not (regexMatch "^[0-9]+(Ki|Mi|Gi|Ti)?$" (toString .values.maxScoreMemory)) -}}
{{- fail (printf "%s.maxScoreMemory %q is not a whole number of bytes with an optional Ki, Mi, Gi or Ti suffix" .name (toString .values.maxScoreMemory)) -}}
{{- end -}}
{{- $bytes := include "svc.bytes" (dict "value" .values.maxScoreMemory "what" (printf "%s.maxScoreMemory" .name)) -}}
{{- if and $limit (ge (atoi $bytes) (atoi $limit)) -}}
{{- fail (printf "%s.maxScoreMemory %s is not below %s.resources.limits.memory %s: the scores and their decoders would be killed by the memory limit before the budget refuses them" .name (toString .values.maxScoreMemory) .name (toString $limits.memory)) -}}
{{- end -}}
{{- $value = toString .values.maxScoreMemory -}}
{{- else if $limit -}}
{{- $value = toString (div (atoi $limit) 2) -}}
{{- end -}}
{{- if $value -}}
- name: SVC_MAX_SCORE_MEMORY
  value: {{ $value | quote }}
{{- end -}}
{{- end -}}
