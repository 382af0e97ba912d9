{{/*
Names, labels and the per-tenant values. Object names and labels match the cdk8s app
(cdk8s/lib/names.ts); what the templates know about the service (ports, paths, the image's user
and commands, which process reads which setting, metric names) comes from files/service.json,
generated from core/ by `npm run generate`.
*/}}

{{- define "market-indexer.name" -}}market-indexer{{- end -}}

{{/* Facts about the service, generated from core/ (see files/service.json). */}}
{{- define "market-indexer.facts" -}}
{{- .Files.Get "files/service.json" -}}
{{- end -}}

{{/* The tenant's namespace: prefixed, so a tenant called `default` cannot land in `default`. */}}
{{- define "market-indexer.namespace" -}}mi-{{ . }}{{- end -}}

{{/*
Later wins; maps merge key by key; lists and scalars are replaced whole; false and 0 override
like any value (sprig's mergeOverwrite would skip them). Same as deepMerge in cdk8s/lib/resolve.ts.
Argument: (list base over). Returns JSON.
*/}}
{{- define "market-indexer.merge" -}}
{{- $base := index . 0 | default dict -}}
{{- $over := index . 1 | default dict -}}
{{- $out := deepCopy $base -}}
{{- range $k, $v := $over -}}
{{- if and (kindIs "map" $v) (kindIs "map" (get $out $k)) -}}
{{- $_ := set $out $k (include "market-indexer.merge" (list (get $out $k) $v) | fromJson) -}}
{{- else -}}
{{- $_ := set $out $k $v -}}
{{- end -}}
{{- end -}}
{{- toJson $out -}}
{{- end -}}

{{/*
A tenant's complete values: the chart's values without `tenants`/`environment`/`global`, then
the tenant's own entry. Argument: (dict "root" $ "tenant" name). Returns JSON.
*/}}
{{- define "market-indexer.values" -}}
{{- $base := omit .root.Values "tenants" "environment" "global" "platform" -}}
{{- $own := index .root.Values.tenants .tenant | default dict -}}
{{- include "market-indexer.merge" (list $base $own) -}}
{{- end -}}

{{/* Labels that select a component's pods. Argument: (dict "root" $ "component" name). */}}
{{- define "market-indexer.selectorLabels" -}}
app.kubernetes.io/name: {{ include "market-indexer.name" . }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/*
Labels on every object of a tenant. Argument: (dict "root" $ "tenant" name "v" values
["component" name]).
*/}}
{{- define "market-indexer.labels" -}}
app.kubernetes.io/name: {{ include "market-indexer.name" . }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
{{- with .component }}
app.kubernetes.io/component: {{ . }}
{{- end }}
app.kubernetes.io/part-of: {{ include "market-indexer.name" . }}
app.kubernetes.io/version: {{ .v.image.tag | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version }}
marketindexer.dev/tenant: {{ .tenant }}
marketindexer.dev/environment: {{ .root.Values.environment }}
{{- end -}}

{{/* Labels of the environment's cluster-level objects (no tenant label). Argument: (dict "root" $ ["component" c]). */}}
{{- define "market-indexer.platformLabels" -}}
app.kubernetes.io/name: {{ include "market-indexer.name" . }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
{{- with .component }}
app.kubernetes.io/component: {{ . }}
{{- end }}
app.kubernetes.io/part-of: {{ include "market-indexer.name" . }}
app.kubernetes.io/version: {{ .root.Values.image.tag | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version }}
marketindexer.dev/environment: {{ .root.Values.environment }}
{{- end -}}

{{/* Metadata of a namespaced object. Argument: (dict "root" $ "tenant" t "v" v "name" n ["component" c]). */}}
{{- define "market-indexer.metadata" -}}
name: {{ .name }}
namespace: {{ include "market-indexer.namespace" .tenant }}
labels:
  {{- include "market-indexer.labels" . | nindent 2 }}
{{- end -}}

{{/* A value as an environment variable: integers without exponent, the rest as written. */}}
{{- define "market-indexer.envValue" -}}
{{- if and (kindIs "float64" .) (eq . (floor .)) -}}
{{- printf "%.0f" . -}}
{{- else -}}
{{- toString . -}}
{{- end -}}
{{- end -}}

{{/*
The tenant's edge, read from its values: whether its HTTPRoute renders (on, with hostnames), the
host names it serves and the proxies the API believes, the route's then the Ingress's. Same as
cdk8s/lib/edge-values.ts. Argument: the tenant's values. Returns JSON.
*/}}
{{- define "market-indexer.edge" -}}
{{- $route := and .api.httpRoute.enabled (gt (len .api.httpRoute.hostnames) 0) -}}
{{- $ing := .api.ingress -}}
{{- $hosts := list -}}
{{- $proxies := list -}}
{{- if $route -}}
{{- $hosts = concat $hosts .api.httpRoute.hostnames -}}
{{- $proxies = concat $proxies .api.httpRoute.trustedProxies -}}
{{- end -}}
{{- if $ing.enabled -}}
{{- if $ing.host -}}
{{- $hosts = append $hosts $ing.host -}}
{{- end -}}
{{- $proxies = concat $proxies $ing.trustedProxies -}}
{{- end -}}
{{- dict "route" $route "hosts" (uniq $hosts) "proxies" (uniq $proxies) | toJson -}}
{{- end -}}

{{/*
The non-secret settings of a process (api or indexer), as ConfigMap data: what the chart
manages, then the tenant's `settings` for the processes that read them. Same as configMapData
in cdk8s/lib/settings-env.ts. Argument: (dict "root" $ "tenant" t "v" v "process" p). Returns JSON.
*/}}
{{- define "market-indexer.settingsData" -}}
{{- $facts := include "market-indexer.facts" .root | fromJson -}}
{{- $v := .v -}}
{{- $data := dict "NODE_ENV" "production" "TENANT_ID" .tenant "PROGRAM_ID" $v.source.programId -}}
{{- if has .process (list "api" "indexer") -}}
{{- /* Stated, not left to the process default: what the ingress's upstream keep-alive is checked against (D-282). */ -}}
{{- $_ := set $data "HTTP_KEEP_ALIVE_TIMEOUT_MS" (include "market-indexer.envValue" $facts.settings.HTTP_KEEP_ALIVE_TIMEOUT_MS.default) -}}
{{- end -}}
{{- if eq .process "api" -}}
{{- $_ := set $data "API_PORT" (include "market-indexer.envValue" $facts.ports.api) -}}
{{- $_ := set $data "API_VARIANT" $v.variant -}}
{{- if $v.api.corsAllowedOrigins -}}
{{- $_ := set $data "CORS_ALLOWED_ORIGINS" (join "," $v.api.corsAllowedOrigins) -}}
{{- end -}}
{{- /* The edge's host names and proxies' addresses (edgeOf, cdk8s/lib/edge-values.ts, D-480), never a hop count (D-230). */ -}}
{{- $edge := include "market-indexer.edge" $v | fromJson -}}
{{- if $edge.hosts -}}
{{- $_ := set $data "PUBLIC_HOSTS" (join "," $edge.hosts) -}}
{{- end -}}
{{- if $edge.proxies -}}
{{- $_ := set $data "TRUST_PROXY" (join "," $edge.proxies) -}}
{{- end -}}
{{- else if eq .process "chain" -}}
{{- $_ := set $data "CHAIN_RPC_PORT" (include "market-indexer.envValue" $facts.ports.chain) -}}
{{- $_ := set $data "DATA_DIR" $facts.chain.dataDir -}}
{{- $_ := set $data "CHAIN_RPC_HOST" $facts.chain.listenHost -}}
{{- else -}}
{{- $_ := set $data "INDEXER_PORT" (include "market-indexer.envValue" $facts.ports.indexer) -}}
{{- end -}}
{{- range $name, $value := $v.settings -}}
{{- $setting := get $facts.settings $name -}}
{{- if and $setting (has $.process $setting.readBy) -}}
{{- $_ := set $data $name (include "market-indexer.envValue" $value) -}}
{{- end -}}
{{- end -}}
{{- toJson $data -}}
{{- end -}}

{{/*
A process's secret settings for the tenant's source, each as a reference to its Secret, where the
tenant has one: the table of files/service.json (secretSettingsOf in cdk8s/lib/settings-env.ts).
Argument: (dict "facts" facts "process" p "v" v).
*/}}
{{- define "market-indexer.secretEnvs" -}}
{{- $v := .v -}}
{{- range (index .facts.secretEnv .process $v.source.type) }}
{{- $ref := include "market-indexer.secretRef" (list $v (index . 1) (index . 2)) | fromJson }}
{{- if $ref }}
{{ include "market-indexer.secretEnv" (list (index . 0) $ref) }}
{{- end }}
{{- end }}
{{- end -}}

{{/*
Where a secret setting's reference is in the values: (list v section key) → the reference as JSON,
`{}` when there is none. DATABASE_URL's is always there: stated, the CloudNativePG Cluster's
generated -app Secret, or the Secret market-indexer's (databaseSecretRef in cdk8s/lib/cloudnativepg.ts).
*/}}
{{- define "market-indexer.secretRef" -}}
{{- $v := index . 0 -}}
{{- if and (eq (index . 1) "database") (eq (index . 2) "secretRef") -}}
{{- include "market-indexer.databaseRef" $v -}}
{{- else -}}
{{- index $v (index . 1) (index . 2) | default dict | toJson -}}
{{- end -}}
{{- end -}}

{{- define "market-indexer.databaseRef" -}}
{{- if .database.secretRef -}}
{{- toJson .database.secretRef -}}
{{- else if .database.cloudnativepg.enabled -}}
{{- toJson (dict "name" "market-indexer-db-app" "key" "uri") -}}
{{- else -}}
{{- toJson (dict "name" "market-indexer" "key" "DATABASE_URL") -}}
{{- end -}}
{{- end -}}

{{/* A secret setting as a reference to its Secret. Argument: (list name ref). */}}
{{- define "market-indexer.secretEnv" -}}
- name: {{ index . 0 }}
  valueFrom:
    secretKeyRef:
      key: {{ (index . 1).key }}
      name: {{ (index . 1).name }}
{{- end -}}

{{/* Restricted Pod Security for a container running as the given uid. */}}
{{- define "market-indexer.containerSecurity" -}}
allowPrivilegeEscalation: false
capabilities:
  drop:
    - ALL
readOnlyRootFilesystem: true
runAsGroup: {{ . }}
runAsNonRoot: true
runAsUser: {{ . }}
{{- end -}}

{{- define "market-indexer.podSecurity" -}}
fsGroup: {{ . }}
runAsGroup: {{ . }}
runAsNonRoot: true
runAsUser: {{ . }}
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{- define "market-indexer.resources" -}}
limits:
  cpu: {{ .limits.cpu | quote }}
  memory: {{ .limits.memory | quote }}
requests:
  cpu: {{ .requests.cpu | quote }}
  memory: {{ .requests.memory | quote }}
{{- end -}}

{{/*
The operator's V8 heap cap in MB for its memory limit (a quantity as values.schema.json allows:
"512Mi", "1.5Gi", "2G"): half of the limit, floored. Same as operatorHeapMb in
cdk8s/lib/sizing.ts (D-420).
*/}}
{{- define "market-indexer.heapMb" -}}
{{- $number := regexReplaceAll "^([0-9.]+).*$" . "${1}" }}
{{- $suffix := regexReplaceAll "^[0-9.]+" . "" }}
{{- $units := dict "" 1 "m" 0.001 "k" 1000 "M" 1000000 "G" 1000000000 "T" 1000000000000 "Ki" 1024 "Mi" 1048576 "Gi" 1073741824 "Ti" 1099511627776 }}
{{- floor (divf (mulf (float64 $number) (get $units $suffix)) 2097152) | int64 }}
{{- end -}}

{{/* An HTTP probe on the named port. Argument: (list path period failures timeout). */}}
{{- define "market-indexer.probe" -}}
failureThreshold: {{ index . 2 }}
httpGet:
  path: {{ index . 0 }}
  port: http
periodSeconds: {{ index . 1 }}
timeoutSeconds: {{ index . 3 }}
{{- end -}}

{{/* Spread over zones and nodes without blocking a small cluster. Argument: (dict "root" $ "component" c). */}}
{{- define "market-indexer.topologySpread" -}}
{{- range list "topology.kubernetes.io/zone" "kubernetes.io/hostname" }}
- labelSelector:
    matchLabels:
      {{- include "market-indexer.selectorLabels" $ | nindent 6 }}
  matchLabelKeys:
    - pod-template-hash
  maxSkew: 1
  topologyKey: {{ . }}
  whenUnsatisfiable: ScheduleAnyway
{{- end }}
{{- end -}}

{{/*
What the schema cannot say: fields that depend on each other. Refused with the same words as
tenantProblems in cdk8s/lib/resolve.ts. Argument: (dict "tenant" t "v" v).
*/}}
{{- define "market-indexer.check" -}}
{{- $v := .v -}}
{{- $p := list -}}
{{- if gt (int $v.api.autoscaling.minReplicas) (int $v.api.autoscaling.maxReplicas) -}}
{{- $p = append $p "api.autoscaling.minReplicas must not exceed api.autoscaling.maxReplicas" -}}
{{- end -}}
{{- if not $v.source.rpcUrlSecretRef -}}
{{- $p = append $p "source.rpcUrlSecretRef: required (the API builds /tx/* transactions on the RPC's blockhashes; an rpc source's indexer reads it too)" -}}
{{- end -}}
{{- if and (eq $v.source.type "webhook") (not $v.source.webhookSecretRef) -}}
{{- $p = append $p "source.webhookSecretRef: required when source.type is webhook" -}}
{{- end -}}
{{- if and (eq $v.source.type "webhook") (ne (int $v.indexer.replicas) 1) -}}
{{- $p = append $p "indexer.replicas must be 1 when source.type is webhook" -}}
{{- end -}}
{{- if and $v.api.ingress.enabled (not $v.api.ingress.host) -}}
{{- $p = append $p "api.ingress.host: required when api.ingress.enabled is true" -}}
{{- end -}}
{{- /* The route's Gateway, and with a CDN a Gateway that admits only it: routeProblems in cdk8s/lib/resolve.ts (D-482). */ -}}
{{- $edge := include "market-indexer.edge" $v | fromJson -}}
{{- $route := $v.api.httpRoute -}}
{{- if $edge.route -}}
{{- if not $route.parentRefs -}}
{{- $p = append $p "api.httpRoute.parentRefs: required when api.httpRoute.hostnames are given (the platform's Gateway the route attaches to, D-480)" -}}
{{- end -}}
{{- if and $route.cdn.enabled (not $route.cdn.gatewayAdmitsOnlyCdn) -}}
{{- $p = append $p "api.httpRoute.cdn.gatewayAdmitsOnlyCdn: required with api.httpRoute.cdn.enabled: an HTTPRoute cannot limit who connects, so the platform's Gateway (or its load balancer) must admit only the CDN's addresses, or a client's own country header reaches the API (docs/deploy.md, D-482)" -}}
{{- end -}}
{{- end -}}
{{- /* What the Ingress no longer does, each refused by name: ingressProblems in cdk8s/lib/country-header.ts (D-484). */ -}}
{{- $facts := include "market-indexer.facts" .root | fromJson -}}
{{- if $v.api.ingress.enabled -}}
{{- $ann := $v.api.ingress.annotations | default dict -}}
{{- range $key := keys $ann | sortAlpha -}}
{{- if regexMatch "^nginx\\.ingress\\.kubernetes\\.io/[a-z-]*snippet$" $key -}}
{{- $p = append $p (printf "api.ingress.annotations[\"%s\"]: refused (D-484): the kit renders no snippet annotation; what it did with one, the HTTPRoute does in Gateway API's core (api.httpRoute, docs/deploy.md \"Upgrading\")" $key) -}}
{{- else if has $key (list "nginx.ingress.kubernetes.io/whitelist-source-range" "nginx.ingress.kubernetes.io/proxy-read-timeout" "nginx.ingress.kubernetes.io/proxy-send-timeout") -}}
{{- $p = append $p (printf "api.ingress.annotations[\"%s\"]: set by the kit (D-484): REST and /tx wait %v s, /ws %v s on an Ingress of its own, and the CDN's addresses come from api.ingress.cdnSourceRanges; remove it (docs/deploy.md \"Upgrading\")" $key $facts.ingress.timeoutSeconds.rest $facts.ingress.timeoutSeconds.ws) -}}
{{- end -}}
{{- end -}}
{{- if and $v.settings.GEO_COUNTRY_HEADER (not $v.api.ingress.cdnSourceRanges) -}}
{{- $p = append $p "api.ingress.cdnSourceRanges: required with settings.GEO_COUNTRY_HEADER when api.ingress.enabled is true: an Ingress cannot remove the header clients send without a snippet (D-484); use the HTTPRoute (api.httpRoute.hostnames), which removes it, or state the CDN that sets it" -}}
{{- end -}}
{{- end -}}
{{- /* Whom the API believes about a client (D-230, D-192): proxyProblems in cdk8s/lib/resolve.ts. */ -}}
{{- $ing := $v.api.ingress -}}
{{- $hasOwn := hasKey $v.settings "TRUST_PROXY" -}}
{{- $own := toString (get $v.settings "TRUST_PROXY") -}}
{{- if hasKey $ing "trustedHops" -}}
{{- $p = append $p "api.ingress.trustedHops: removed (D-230): a hop count lets whoever reaches the API choose its address; list the ingress controller's addresses or subnets in api.ingress.trustedProxies" -}}
{{- end -}}
{{- if and $ing.enabled (not $ing.trustedProxies) (not $hasOwn) -}}
{{- $p = append $p "api.ingress.trustedProxies: required when api.ingress.enabled is true (the ingress controller's pod addresses or subnets, e.g. the pod network's CIDR; the API's TRUST_PROXY, D-230)" -}}
{{- end -}}
{{- if and $edge.route (not $route.trustedProxies) (not $hasOwn) -}}
{{- $p = append $p "api.httpRoute.trustedProxies: required when the HTTPRoute renders (the Gateway's data-plane pod addresses or subnets, e.g. the pod network's CIDR; the API's TRUST_PROXY, D-230)" -}}
{{- end -}}
{{- if and $hasOwn (regexMatch "^(true|0*[1-9][0-9]*)$" $own) -}}
{{- $p = append $p "settings.TRUST_PROXY: a hop count or true trusts whoever connects; list the proxies' addresses or subnets (with the route: api.httpRoute.trustedProxies; with the ingress: api.ingress.trustedProxies) (D-230)" -}}
{{- end -}}
{{- if or $v.settings.GEO_BLOCKED_COUNTRIES $v.settings.ATTESTATION_REQUIRED_COUNTRIES -}}
{{- if not $v.settings.GEO_COUNTRY_HEADER -}}
{{- $p = append $p "settings.GEO_COUNTRY_HEADER: required with settings.GEO_BLOCKED_COUNTRIES or settings.ATTESTATION_REQUIRED_COUNTRIES (without it no country is known and the API refuses to start, D-192)" -}}
{{- end -}}
{{- $byAddress := gt (len $edge.proxies) 0 -}}
{{- if $hasOwn -}}
{{- $byAddress = not (regexMatch "^(true|false|[0-9]+)$" $own) -}}
{{- end -}}
{{- if not $byAddress -}}
{{- $p = append $p "settings.GEO_BLOCKED_COUNTRIES, settings.ATTESTATION_REQUIRED_COUNTRIES: a jurisdiction policy needs the proxies' addresses (api.httpRoute.trustedProxies with api.httpRoute.hostnames, api.ingress.enabled with api.ingress.trustedProxies, or settings.TRUST_PROXY as addresses): the API believes GEO_COUNTRY_HEADER only from them and refuses to start otherwise (D-192)" -}}
{{- end -}}
{{- end -}}
{{- /* The dev stores write their Secret(s) whole: a key the kit does not write there would be missing. */ -}}
{{- if $v.devStores.enabled -}}
{{- $written := list (include "market-indexer.databaseRef" $v | fromJson).name $v.redis.secretRef.name -}}
{{- $refs := list (list "rpcWsUrlSecretRef" $v.source.rpcWsUrlSecretRef) (list "webhookSecretRef" $v.source.webhookSecretRef) -}}
{{- if ne $v.source.type "simulator" -}}
{{- $refs = prepend $refs (list "rpcUrlSecretRef" $v.source.rpcUrlSecretRef) -}}
{{- end -}}
{{- range $r := $refs -}}
{{- $ref := index $r 1 -}}
{{- if and $ref (has $ref.name $written) -}}
{{- $p = append $p (printf "source.%s: the dev stores write Secret %s themselves; name a Secret you create" (index $r 0) $ref.name) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if ge (int $v.monitoring.slotLag.warning) (int $v.monitoring.slotLag.critical) -}}
{{- $p = append $p "monitoring.slotLag.warning must be below monitoring.slotLag.critical" -}}
{{- end -}}
{{- $np := $v.networkPolicy -}}
{{- if $np.enabled -}}
{{- if not $v.devStores.enabled -}}
{{- if and (not $v.database.cloudnativepg.enabled) (not $np.egress.database.ipBlocks) -}}
{{- $p = append $p "networkPolicy.egress.database.ipBlocks: required (the API and the indexer must reach PostgreSQL), or set networkPolicy.enabled to false" -}}
{{- end -}}
{{- if not $np.egress.redis.ipBlocks -}}
{{- $p = append $p "networkPolicy.egress.redis.ipBlocks: required (the API and the indexer must reach Redis), or set networkPolicy.enabled to false" -}}
{{- end -}}
{{- end -}}
{{- if and (eq $v.source.type "rpc") (not $np.egress.rpc.ipBlocks) -}}
{{- $p = append $p "networkPolicy.egress.rpc.ipBlocks: required (the API and the indexer must reach the RPC node), or set networkPolicy.enabled to false" -}}
{{- end -}}
{{- if and (eq $v.source.type "webhook") (not $np.egress.rpc.ipBlocks) -}}
{{- $p = append $p "networkPolicy.egress.rpc.ipBlocks: required (the API must reach the RPC node for /tx/*), or set networkPolicy.enabled to false" -}}
{{- end -}}
{{- if and $v.settings.OTEL_EXPORTER_OTLP_ENDPOINT (not $np.egress.otlp.ipBlocks) -}}
{{- $p = append $p "networkPolicy.egress.otlp.ipBlocks: required (traces go to OTEL_EXPORTER_OTLP_ENDPOINT), or set networkPolicy.enabled to false" -}}
{{- end -}}
{{- if and (eq $v.source.type "webhook") (not $np.webhookSenders) -}}
{{- $p = append $p "networkPolicy.webhookSenders: required when source.type is webhook (nobody could post), or set networkPolicy.enabled to false" -}}
{{- end -}}
{{- end -}}
{{- /* A CloudNativePG database: cloudNativePgProblems in cdk8s/lib/cloudnativepg.ts. */ -}}
{{- $c := $v.database.cloudnativepg -}}
{{- if $c.enabled -}}
{{- if $v.database.secretRef -}}
{{- $p = append $p "database.secretRef and database.cloudnativepg.enabled: choose one (the Cluster makes its own credentials, in the Secret market-indexer-db-app)" -}}
{{- end -}}
{{- if $v.devStores.enabled -}}
{{- $p = append $p "database.cloudnativepg.enabled and devStores.enabled: choose one (both would run the tenant's PostgreSQL)" -}}
{{- end -}}
{{- if and $c.synchronous.enabled (ge (int $c.synchronous.number) (int $c.instances)) -}}
{{- $p = append $p (printf "database.cloudnativepg.synchronous.number (%d) must be below database.cloudnativepg.instances (%d): synchronous replication needs that many standbys besides the primary" (int $c.synchronous.number) (int $c.instances)) -}}
{{- end -}}
{{- end -}}
{{- if $p -}}
{{- fail (printf "tenant %s: %s" .tenant (join "; " $p)) -}}
{{- end -}}
{{- end -}}

{{/* NetworkPolicy peers for a list of address blocks. */}}
{{- define "market-indexer.ipBlocks" -}}
{{- range . }}
- ipBlock:
    cidr: {{ .cidr }}
    {{- with .except }}
    except:
      {{- toYaml . | nindent 6 }}
    {{- end }}
{{- end }}
{{- end -}}

{{- /* An egress rule to a destination's address blocks and ports. Returns JSON. */ -}}
{{- define "market-indexer.egressRule" -}}
{{- $ports := list }}
{{- range .ports }}{{ $ports = append $ports (dict "protocol" "TCP" "port" (int .)) }}{{ end }}
{{- toJson (dict "to" (include "market-indexer.ipBlocks" .ipBlocks | fromYamlArray) "ports" $ports) -}}
{{- end -}}
