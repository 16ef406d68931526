{{/* The release's name prefix for every object. */}}
{{- define "clonos.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 52 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 52 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "clonos.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* Selector labels of one component: jobmanager, taskmanager, kafka, ... */}}
{{- define "clonos.selector" -}}
app.kubernetes.io/name: {{ .root.Chart.Name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "clonos.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag }}
{{- end -}}

{{- define "clonos.jobmanager" -}}
{{ include "clonos.fullname" . }}-jobmanager
{{- end -}}

{{- define "clonos.kafka" -}}
{{ include "clonos.fullname" . }}-kafka
{{- end -}}

{{- define "clonos.zookeeper" -}}
{{ include "clonos.fullname" . }}-zookeeper
{{- end -}}

{{- define "clonos.namenode" -}}
{{ include "clonos.fullname" . }}-hdfs-namenode
{{- end -}}

{{/* The file system URI of the release's HDFS. */}}
{{- define "clonos.hdfsUri" -}}
hdfs://{{ include "clonos.namenode" . }}:8020
{{- end -}}

{{/*
config.yaml: the chart's keys, then flinkConfiguration over them. Flat keys, as Flink 1.20's
config.yaml accepts them.
*/}}
{{- define "clonos.flinkConfiguration" -}}
{{- $chart := dict
  "jobmanager.rpc.address" (include "clonos.jobmanager" .)
  "jobmanager.rpc.port" 6123
  "jobmanager.bind-host" "0.0.0.0"
  "jobmanager.memory.process.size" .Values.jobManager.memory
  "blob.server.port" 6124
  "rest.address" (include "clonos.jobmanager" .)
  "rest.bind-address" "0.0.0.0"
  "rest.port" 8081
  "taskmanager.bind-host" "0.0.0.0"
  "taskmanager.rpc.port" 6122
  "taskmanager.data.port" 6121
  "taskmanager.numberOfTaskSlots" .Values.taskManager.slots
  "taskmanager.memory.process.size" .Values.taskManager.memory
  "parallelism.default" .Values.taskManager.slots
  "clonos.standby.enabled" .Values.standby.enabled
-}}
{{- if .Values.hdfs.enabled -}}
{{- $_ := set $chart "state.backend.type" "rocksdb" -}}
{{- $_ := set $chart "state.backend.incremental" true -}}
{{- $_ := set $chart "state.checkpoints.dir" (printf "%s/clonos/checkpoints" (include "clonos.hdfsUri" .)) -}}
{{- end -}}
{{- if .Values.highAvailability.enabled -}}
{{- $_ := set $chart "high-availability.type" "zookeeper" -}}
{{- $_ := set $chart "high-availability.zookeeper.quorum" (printf "%s:2181" (include "clonos.zookeeper" .)) -}}
{{- $_ := set $chart "high-availability.cluster-id" (include "clonos.fullname" .) -}}
{{- $_ := set $chart "high-availability.storageDir" (.Values.highAvailability.storageDir | default (printf "%s/clonos/ha" (include "clonos.hdfsUri" .))) -}}
{{- end -}}
{{- $merged := merge (deepCopy .Values.flinkConfiguration) $chart -}}
{{- range $key, $value := $merged }}
{{ $key }}: {{ $value | toJson }}
{{- end }}
{{- end -}}

{{/* The environment of the JobManager and TaskManager containers. */}}
{{- define "clonos.env" -}}
- name: POD_IP
  valueFrom:
    fieldRef:
      fieldPath: status.podIP
- name: POD_NAME
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
{{- if .Values.hdfs.enabled }}
- name: HADOOP_CLASSPATH
  value: /opt/clonos/opt/hadoop/*
{{- end }}
{{- end -}}

{{/* config.yaml over the image's, and a writable log directory. */}}
{{- define "clonos.volumeMounts" -}}
- name: config
  mountPath: /opt/clonos/conf/config.yaml
  subPath: config.yaml
- name: log
  mountPath: /opt/clonos/log
{{- end -}}

{{- define "clonos.volumes" -}}
- name: config
  configMap:
    name: {{ include "clonos.fullname" . }}-config
- name: log
  emptyDir: {}
{{- end -}}
