// The known-fields trees of the shapes every type embeds: ObjectMeta, PodSpec and Container
// (containers and initContainers checked; volumes and deeper levels open).
#include "emulator/api/known_fields.h"

namespace pjemu::api {

const KnownFields* OpenFields() {
  static const KnownFields kOpen;
  return &kOpen;
}

KnownFields* ObjectFields(const std::vector<const char*>& open_fields) {
  auto* s = new KnownFields;  // NOLINT: the schemas live for the whole program
  s->open = false;
  for (const char* f : open_fields) s->fields[f] = OpenFields();
  return s;
}

KnownFields* ArrayOf(const KnownFields* item) {
  auto* s = new KnownFields;  // NOLINT: as above
  s->items = item;
  s->open = false;
  return s;
}

const KnownFields* ObjectMetaFields() {
  static const KnownFields* s = ObjectFields(
      {"name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation",
       "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels",
       "annotations", "ownerReferences", "finalizers", "managedFields"});
  return s;
}

const KnownFields* ContainerFields() {
  static const KnownFields* s = [] {
    KnownFields* c = ObjectFields({"args",
                                   "command",
                                   "envFrom",
                                   "image",
                                   "imagePullPolicy",
                                   "lifecycle",
                                   "livenessProbe",
                                   "name",
                                   "readinessProbe",
                                   "resizePolicy",
                                   "restartPolicy",
                                   "securityContext",
                                   "startupProbe",
                                   "stdin",
                                   "stdinOnce",
                                   "terminationMessagePath",
                                   "terminationMessagePolicy",
                                   "tty",
                                   "volumeDevices",
                                   "workingDir"});
    c->fields["env"] = ArrayOf(ObjectFields({"name", "value", "valueFrom"}));
    c->fields["ports"] =
        ArrayOf(ObjectFields({"containerPort", "hostIP", "hostPort", "name", "protocol"}));
    c->fields["resources"] = ObjectFields({"claims", "limits", "requests"});
    c->fields["volumeMounts"] =
        ArrayOf(ObjectFields({"mountPath", "mountPropagation", "name", "readOnly",
                              "recursiveReadOnly", "subPath", "subPathExpr"}));
    return c;
  }();
  return s;
}

const KnownFields* PodSpecFields() {
  static const KnownFields* s = [] {
    KnownFields* p = ObjectFields({"activeDeadlineSeconds",
                                   "affinity",
                                   "automountServiceAccountToken",
                                   "dnsConfig",
                                   "dnsPolicy",
                                   "enableServiceLinks",
                                   "ephemeralContainers",
                                   "hostAliases",
                                   "hostIPC",
                                   "hostNetwork",
                                   "hostPID",
                                   "hostUsers",
                                   "hostname",
                                   "imagePullSecrets",
                                   "nodeName",
                                   "nodeSelector",
                                   "os",
                                   "overhead",
                                   "preemptionPolicy",
                                   "priority",
                                   "priorityClassName",
                                   "readinessGates",
                                   "resourceClaims",
                                   "restartPolicy",
                                   "runtimeClassName",
                                   "schedulerName",
                                   "schedulingGates",
                                   "securityContext",
                                   "serviceAccount",
                                   "serviceAccountName",
                                   "setHostnameAsFQDN",
                                   "shareProcessNamespace",
                                   "subdomain",
                                   "terminationGracePeriodSeconds",
                                   "tolerations",
                                   "topologySpreadConstraints"});
    p->fields["containers"] = ArrayOf(ContainerFields());
    p->fields["initContainers"] = ArrayOf(ContainerFields());
    p->fields["volumes"] = ArrayOf(OpenFields());
    return p;
  }();
  return s;
}

}  // namespace pjemu::api
