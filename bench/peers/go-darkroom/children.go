package main

// The four children of a Darkroom as server-side apply configurations: a line-by-line port of the reconciler's
// pure builders (operator/darkroom_operator/darkroomchildren.py) with the reconciler's default settings, so the
// bodies the benchmark's three operators apply are the same (only the managed-by label and the field manager
// differ). Ours additionally stamps each body with a digest annotation (its drift detection); this peer does not.

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	networkingv1ac "k8s.io/client-go/applyconfigurations/networking/v1"
)

// The reconciler's defaults (darkroom_operator.settings.OperatorSettings and darkroomchildren's constants).
const (
	nameLabel        = "app.kubernetes.io/name"
	instanceLabel    = "app.kubernetes.io/instance"
	managedByLabel   = "app.kubernetes.io/managed-by"
	configHashAnnot  = "deployments.example.com/config-hash"
	appName          = "darkroom"
	containerName    = "darkroom"
	containerPort    = 3000
	portName         = "http"
	servicePort      = 80
	healthPath       = "/ping"
	imageRepository  = "gojektech/darkroom"
	domain           = "darkroom.example.com"
	defaultVersion   = "latest"
	defaultCacheTime = int64(31536000)
	runAsID          = int64(65534)
	webFolder        = "WebFolder"
	s3               = "S3"
)

var hystrixDefaults = map[string]string{
	"SOURCE_HYSTRIX_TIMEOUT":                "5000",
	"SOURCE_HYSTRIX_MAXCONCURRENTREQUESTS":  "100",
	"SOURCE_HYSTRIX_REQUESTVOLUMETHRESHOLD": "10",
	"SOURCE_HYSTRIX_SLEEPWINDOW":            "10",
	"SOURCE_HYSTRIX_ERRORPERCENTTHRESHOLD":  "25",
}

// problems is what the CRD schema cannot say about a spec (empty: usable); darkroomchildren.validate.
func problems(d *Darkroom) []string {
	src := d.Spec.Source
	switch src.Type {
	case webFolder:
		if src.BaseURL == "" {
			return []string{"spec.source.baseUrl: required for a WebFolder source"}
		}
	case s3:
		if src.Bucket == "" {
			return []string{"spec.source.bucket: required for an S3 source"}
		}
	default:
		return []string{fmt.Sprintf("spec.source.type: must be one of WebFolder, S3, not %q", src.Type)}
	}
	return nil
}

func selectorLabels(d *Darkroom) map[string]string {
	return map[string]string{nameLabel: appName, instanceLabel: d.Name}
}

func childLabels(d *Darkroom) map[string]string {
	labels := selectorLabels(d)
	labels[managedByLabel] = managedBy
	return labels
}

func ownerReference(d *Darkroom) *metav1ac.OwnerReferenceApplyConfiguration {
	return metav1ac.OwnerReference().
		WithAPIVersion(GroupVersion.String()).
		WithKind("Darkroom").
		WithName(d.Name).
		WithUID(d.UID).
		WithController(true).
		WithBlockOwnerDeletion(true)
}

// imageTag: "0.4.2" and "v0.4.2" both give "v0.4.2"; a tag not starting with a digit is used as is.
func imageTag(version string) string {
	tag := strings.TrimSpace(version)
	if tag == "" {
		tag = defaultVersion
	}
	if tag[0] >= '0' && tag[0] <= '9' {
		return "v" + tag
	}
	return tag
}

// hosts is "<subDomain>.<domain>" for every sub-domain, in spec order (also status.domains).
func hosts(d *Darkroom) []string {
	out := make([]string, 0, len(d.Spec.SubDomains))
	for _, sub := range d.Spec.SubDomains {
		out = append(out, sub+"."+domain)
	}
	return out
}

func credentialsSecret(d *Darkroom) string {
	if d.Spec.Source.Type != s3 || d.Spec.Source.CredentialsSecretRef == nil {
		return ""
	}
	return d.Spec.Source.CredentialsSecretRef.Name
}

func configData(d *Darkroom) map[string]string {
	src := d.Spec.Source
	cacheTime := defaultCacheTime
	if d.Spec.CacheTime != nil {
		cacheTime = *d.Spec.CacheTime
	}
	data := map[string]string{
		"APP_NAME":                   d.Name,
		"APP_VERSION":                imageTag(d.Spec.Version),
		"APP_DESCRIPTION":            "A realtime image processing service",
		"PORT":                       strconv.Itoa(containerPort),
		"LOG_LEVEL":                  "info",
		"METRICS_SYSTEM":             "prometheus",
		"CACHE_TIME":                 strconv.FormatInt(cacheTime, 10),
		"SOURCE_KIND":                src.Type,
		"SOURCE_HYSTRIX_COMMANDNAME": src.Type + "_ADAPTER",
	}
	for k, v := range hystrixDefaults {
		data[k] = v
	}
	switch src.Type {
	case webFolder:
		data["SOURCE_BASEURL"] = src.BaseURL
	case s3:
		for k, v := range map[string]string{"SOURCE_BUCKET_NAME": src.Bucket, "SOURCE_BUCKET_REGION": src.Region, "SOURCE_BUCKET_ENDPOINT": src.Endpoint} {
			if v != "" {
				data[k] = v
			}
		}
	}
	if src.PathPrefix != "" {
		data["SOURCE_PATHPREFIX"] = src.PathPrefix
	}
	return data
}

// configHash is the reconciler's digest of the configuration (sha256 of the key-sorted compact JSON, 16 hex
// digits): the same value as ours for the same Darkroom. A new value rolls the pods.
func configHash(d *Darkroom) string {
	var secret any
	if name := credentialsSecret(d); name != "" {
		secret = name
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(map[string]any{"data": configData(d), "credentialsSecret": secret}) // maps encode with sorted keys
	sum := sha256.Sum256([]byte(strings.TrimSuffix(b.String(), "\n")))
	return hex.EncodeToString(sum[:])[:16]
}

func configMap(d *Darkroom) *corev1ac.ConfigMapApplyConfiguration {
	return corev1ac.ConfigMap(d.Name, d.Namespace).
		WithLabels(childLabels(d)).
		WithOwnerReferences(ownerReference(d)).
		WithData(configData(d))
}

func probe(periodS int32) *corev1ac.ProbeApplyConfiguration {
	return corev1ac.Probe().
		WithHTTPGet(corev1ac.HTTPGetAction().WithPath(healthPath).WithPort(intstr.FromString(portName))).
		WithPeriodSeconds(periodS).
		WithTimeoutSeconds(2).
		WithFailureThreshold(3)
}

func container(d *Darkroom) *corev1ac.ContainerApplyConfiguration {
	c := corev1ac.Container().
		WithName(containerName).
		WithImage(imageRepository + ":" + imageTag(d.Spec.Version)).
		WithPorts(corev1ac.ContainerPort().WithName(portName).WithContainerPort(containerPort).WithProtocol(corev1.ProtocolTCP)).
		WithEnvFrom(corev1ac.EnvFromSource().WithConfigMapRef(corev1ac.ConfigMapEnvSource().WithName(d.Name)))
	if secret := credentialsSecret(d); secret != "" {
		for _, kv := range [][2]string{{"SOURCE_BUCKET_ACCESSKEY", "accessKey"}, {"SOURCE_BUCKET_SECRETKEY", "secretKey"}} {
			c.WithEnv(corev1ac.EnvVar().WithName(kv[0]).WithValueFrom(
				corev1ac.EnvVarSource().WithSecretKeyRef(corev1ac.SecretKeySelector().WithName(secret).WithKey(kv[1]))))
		}
	}
	return c.
		WithReadinessProbe(probe(5)).
		WithLivenessProbe(probe(10)).
		WithResources(corev1ac.ResourceRequirements().
			WithRequests(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")}).
			WithLimits(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("512Mi")})).
		WithSecurityContext(corev1ac.SecurityContext().
			WithAllowPrivilegeEscalation(false).
			WithReadOnlyRootFilesystem(true).
			WithRunAsNonRoot(true).
			WithCapabilities(corev1ac.Capabilities().WithDrop("ALL"))).
		WithVolumeMounts(corev1ac.VolumeMount().WithName("tmp").WithMountPath("/tmp"))
}

func deployment(d *Darkroom) *appsv1ac.DeploymentApplyConfiguration {
	replicas := int32(1)
	if d.Spec.Replicas != nil {
		replicas = *d.Spec.Replicas
	}
	return appsv1ac.Deployment(d.Name, d.Namespace).
		WithLabels(childLabels(d)).
		WithOwnerReferences(ownerReference(d)).
		WithSpec(appsv1ac.DeploymentSpec().
			WithReplicas(replicas).
			WithSelector(metav1ac.LabelSelector().WithMatchLabels(selectorLabels(d))).
			WithTemplate(corev1ac.PodTemplateSpec().
				WithLabels(childLabels(d)).
				WithAnnotations(map[string]string{configHashAnnot: configHash(d)}).
				WithSpec(corev1ac.PodSpec().
					WithAutomountServiceAccountToken(false).
					WithEnableServiceLinks(false).
					WithSecurityContext(corev1ac.PodSecurityContext().
						WithRunAsNonRoot(true).
						WithRunAsUser(runAsID).
						WithRunAsGroup(runAsID).
						WithSeccompProfile(corev1ac.SeccompProfile().WithType(corev1.SeccompProfileTypeRuntimeDefault))).
					WithContainers(container(d)).
					WithVolumes(corev1ac.Volume().WithName("tmp").WithEmptyDir(
						corev1ac.EmptyDirVolumeSource().WithSizeLimit(resource.MustParse("64Mi")))))))
}

func service(d *Darkroom) *corev1ac.ServiceApplyConfiguration {
	return corev1ac.Service(d.Name, d.Namespace).
		WithLabels(childLabels(d)).
		WithOwnerReferences(ownerReference(d)).
		WithSpec(corev1ac.ServiceSpec().
			WithType(corev1.ServiceTypeClusterIP).
			WithSelector(selectorLabels(d)).
			WithPorts(corev1ac.ServicePort().
				WithName(portName).
				WithPort(servicePort).
				WithTargetPort(intstr.FromString(portName)).
				WithProtocol(corev1.ProtocolTCP)))
}

func ingress(d *Darkroom) *networkingv1ac.IngressApplyConfiguration {
	spec := networkingv1ac.IngressSpec()
	for _, host := range hosts(d) {
		backend := networkingv1ac.IngressBackend().WithService(networkingv1ac.IngressServiceBackend().
			WithName(d.Name).
			WithPort(networkingv1ac.ServiceBackendPort().WithName(portName)))
		spec.WithRules(networkingv1ac.IngressRule().
			WithHost(host).
			WithHTTP(networkingv1ac.HTTPIngressRuleValue().WithPaths(networkingv1ac.HTTPIngressPath().
				WithPath("/").
				WithPathType(networkingv1.PathTypePrefix).
				WithBackend(backend))))
	}
	return networkingv1ac.Ingress(d.Name, d.Namespace).
		WithLabels(childLabels(d)).
		WithOwnerReferences(ownerReference(d)).
		WithSpec(spec)
}
