package main

// The Darkroom custom resource as a small hand-written Go type (deployments.example.com/v1, the CRD's storage
// version; the API server converts v1alpha1 objects, which differ only in apiVersion). Only the fields this peer
// reads are declared; DeepCopy is written by hand instead of generated (controller-gen is not needed to build).

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is the version this peer reads and writes Darkrooms at.
var GroupVersion = schema.GroupVersion{Group: "deployments.example.com", Version: "v1"}

// addToScheme registers Darkroom and DarkroomList at GroupVersion.
func addToScheme(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion, &Darkroom{}, &DarkroomList{})
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
}

// Darkroom is one deployment of the Darkroom image proxy.
type Darkroom struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   DarkroomSpec   `json:"spec,omitempty"`
	Status DarkroomStatus `json:"status,omitempty"`
}

// DarkroomSpec is what the user asks for (the API server has filled in the CRD's defaults).
type DarkroomSpec struct {
	Version    string         `json:"version,omitempty"`
	Replicas   *int32         `json:"replicas,omitempty"`
	Source     DarkroomSource `json:"source"`
	SubDomains []string       `json:"subDomains,omitempty"`
	CacheTime  *int64         `json:"cacheTime,omitempty"`
}

// DarkroomSource says where the original images live.
type DarkroomSource struct {
	Type                 string     `json:"type"`
	BaseURL              string     `json:"baseUrl,omitempty"`
	Bucket               string     `json:"bucket,omitempty"`
	Region               string     `json:"region,omitempty"`
	Endpoint             string     `json:"endpoint,omitempty"`
	PathPrefix           string     `json:"pathPrefix,omitempty"`
	CredentialsSecretRef *SecretRef `json:"credentialsSecretRef,omitempty"`
}

// SecretRef names a Secret in the Darkroom's namespace.
type SecretRef struct {
	Name string `json:"name"`
}

// DarkroomStatus is what the controller observed (only the fields this peer writes; it never writes tls).
type DarkroomStatus struct {
	Domains            []string           `json:"domains,omitempty"`
	TLS                *bool              `json:"tls,omitempty"`
	ReadyReplicas      int32              `json:"readyReplicas,omitempty"`
	ObservedGeneration int64              `json:"observedGeneration,omitempty"`
	Conditions         []metav1.Condition `json:"conditions,omitempty"`
}

// DarkroomList is a list of Darkrooms (what the cache lists).
type DarkroomList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Darkroom `json:"items"`
}

// DeepCopyInto copies d into out, sharing nothing.
func (d *Darkroom) DeepCopyInto(out *Darkroom) {
	*out = *d
	out.TypeMeta = d.TypeMeta
	d.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	d.Spec.deepCopyInto(&out.Spec)
	d.Status.deepCopyInto(&out.Status)
}

// DeepCopy returns a copy of d sharing nothing with it.
func (d *Darkroom) DeepCopy() *Darkroom {
	if d == nil {
		return nil
	}
	out := new(Darkroom)
	d.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (d *Darkroom) DeepCopyObject() runtime.Object {
	return d.DeepCopy()
}

func (s *DarkroomSpec) deepCopyInto(out *DarkroomSpec) {
	*out = *s
	if s.Replicas != nil {
		v := *s.Replicas
		out.Replicas = &v
	}
	if s.CacheTime != nil {
		v := *s.CacheTime
		out.CacheTime = &v
	}
	if s.Source.CredentialsSecretRef != nil {
		v := *s.Source.CredentialsSecretRef
		out.Source.CredentialsSecretRef = &v
	}
	out.SubDomains = append([]string(nil), s.SubDomains...)
}

func (s *DarkroomStatus) deepCopyInto(out *DarkroomStatus) {
	*out = *s
	if s.TLS != nil {
		v := *s.TLS
		out.TLS = &v
	}
	out.Domains = append([]string(nil), s.Domains...)
	if s.Conditions != nil {
		out.Conditions = make([]metav1.Condition, len(s.Conditions))
		for i := range s.Conditions {
			s.Conditions[i].DeepCopyInto(&out.Conditions[i])
		}
	}
}

// DeepCopyInto copies l into out, sharing nothing.
func (l *DarkroomList) DeepCopyInto(out *DarkroomList) {
	*out = *l
	out.TypeMeta = l.TypeMeta
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	if l.Items != nil {
		out.Items = make([]Darkroom, len(l.Items))
		for i := range l.Items {
			l.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
}

// DeepCopyObject implements runtime.Object.
func (l *DarkroomList) DeepCopyObject() runtime.Object {
	if l == nil {
		return nil
	}
	out := new(DarkroomList)
	l.DeepCopyInto(out)
	return out
}
