package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SecretScope says whom a hosted secret serves.
// +kubebuilder:validation:Enum=user;job;org
type SecretScope string

const (
	// ScopeUser secrets belong to one user of the organization.
	ScopeUser SecretScope = "user"
	// ScopeJob secrets belong to one job.
	ScopeJob SecretScope = "job"
	// ScopeOrg secrets belong to the organization as a whole: registry credentials.
	ScopeOrg SecretScope = "org"
)

// SecretType says what a hosted secret is for (docs/secrets.md, "Registry credentials").
// +kubebuilder:validation:Enum=env;registry
type SecretType string

const (
	// TypeEnv secrets are exported into a run as an environment variable.
	TypeEnv SecretType = "env"
	// TypeRegistry secrets are credentials of a private container registry, handed to
	// a run as an imagePullSecret.
	TypeRegistry SecretType = "registry"
)

// RegistrySpec names a private container registry and the account a registry
// credential signs in with. The password or token is the value, in the value Secret.
type RegistrySpec struct {
	// server is the registry's host name, with an optional port: lower-case letters,
	// digits, '-' and '.', for example ghcr.io or registry.example.com:5000.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*(:[0-9]{1,5})?$`
	Server string `json:"server"`
	// username signs in to the registry: 1 to 256 characters, no white space, no ':'
	// and no control or formatting characters.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:XValidation:rule="!self.matches(r'[\\s:\\p{Cc}\\p{Cf}\\p{Zl}\\p{Zp}]')",message="username must not contain white space, ':' or control or formatting characters"
	Username string `json:"username"`
	// displayName names the credential in its organization (the unit that is
	// superseded): 1 to 63 letters, digits, ' ', '.', '_' and '-', starting and ending
	// with a letter or digit.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9]([A-Za-z0-9 ._-]*[A-Za-z0-9])?$`
	DisplayName string `json:"displayName"`
}

// SecretState is whether a hosted secret can be used.
// +kubebuilder:validation:Enum=active;revoked
type SecretState string

const (
	StateActive  SecretState = "active"
	StateRevoked SecretState = "revoked"
)

// Reasons a hosted secret was revoked.
const (
	RevokedByRequest = "revoked"
	RevokedSupersede = "superseded"
)

// Labels and annotations of hosted secrets and of the objects that serve them.
const (
	// LabelHostedSecret is on every Secret holding a hosted secret's value: the name of
	// the HostedSecret it belongs to. The operator finds (and cleans up) value Secrets by
	// it, and adopts a Secret applied with kubectl only when it carries it.
	LabelHostedSecret = "hub.podium.dev/hosted-secret"
	// AnnotationGrantedSecrets is on each org namespace: the names of the Secrets of that
	// namespace granted to hosted secrets (LabelHostedSecret) under a name not reserved
	// for grants (podium-granted-*, which protects itself), as grants were named before
	// that rule, that the operator recorded, comma-separated and sorted. The run Secret
	// admission policy refuses every Pod and template naming one of them (docs/design/delivery.md,
	// "Who may read a granted Secret").
	AnnotationGrantedSecrets = "hub.podium.dev/granted-secrets"
	// AnnotationHostedSecretUID is on every value Secret Podium has stored or adopted:
	// the UID of the HostedSecret it is bound to. A Secret bound to one HostedSecret is
	// never used by another, even one of the same name (docs/secrets.md, "Ownership").
	AnnotationHostedSecretUID = "hub.podium.dev/hosted-secret-uid"
	// LabelOrg is on every value Secret in the operator's value namespace: the namespace
	// (org) of the HostedSecret it belongs to. A Secret cannot be owned across namespaces,
	// so the operator finds (and cleans up) such values by it and LabelHostedSecret.
	LabelOrg = "hub.podium.dev/org"
	// LabelSlot is on each slot pointer (a Lease): the hash of the slot it guards.
	LabelSlot = "hub.podium.dev/slot"
	// AnnotationHolderName is on each slot pointer: the name of the HostedSecret whose
	// UID is the Lease's holderIdentity.
	AnnotationHolderName = "hub.podium.dev/holder-name"
	// AnnotationCreatedBy records who created an object: on a HostedSecret, the
	// Kubernetes user that stored it over HTTP (or, with kubectl, set to one's own name;
	// config/admission refuses anyone else's); on a LeaderboardRow, the user that created
	// it, set by the apiserver at admission (config/admission/row_metadata.yaml).
	AnnotationCreatedBy = "hub.podium.dev/created-by"
	// LabelRegistrySeat is on each of an organization's registry credential seats (a
	// Lease): the seat's number. docs/secrets.md, "Registry credentials".
	LabelRegistrySeat = "hub.podium.dev/registry-seat"
	// AnnotationRegistrySeat is on the slot pointer of a registry credential: the name
	// of the seat Lease its credential holds.
	AnnotationRegistrySeat = "hub.podium.dev/registry-seat"
	// LabelQuarantined is on a value Secret bound to a hosted secret that no live
	// HostedSecret is (its record was deleted, or is not restored yet): the operator
	// keeps it for a grace period instead of deleting it (docs/operations.md,
	// "Quarantine"), and takes the label off when the record comes back.
	LabelQuarantined = "hub.podium.dev/quarantined"
	// AnnotationQuarantinedAt is when a value Secret was quarantined (RFC 3339); the
	// grace period counts from it.
	AnnotationQuarantinedAt = "hub.podium.dev/quarantined-at"
)

// Reasons of the operator's events about value Secrets (docs/operations.md, "Backup and restore"). The
// events name objects and ids, never a value.
const (
	// ReasonValueQuarantined: a value Secret is bound to no live HostedSecret; kept for
	// the grace period.
	ReasonValueQuarantined = "ValueQuarantined"
	// ReasonValueReattached: a quarantined value Secret was taken back by its
	// HostedSecret (restored, or re-attached by a restore identity).
	ReasonValueReattached = "ValueReattached"
	// ReasonStrayValueDeleted: a value Secret no live secret uses was deleted (its
	// secret was revoked, its quarantine ended, or it was never bound to one).
	ReasonStrayValueDeleted = "StrayValueDeleted"
	// ReasonAbandonedStoreDeleted: a secret stored over HTTP whose request died before
	// it claimed its slot was deleted.
	ReasonAbandonedStoreDeleted = "AbandonedStoreDeleted"
)

// Condition reasons of a HostedSecret's Ready condition.
const (
	// ReasonActive: the secret holds its slot and its value is stored.
	ReasonActive = "Active"
	// ReasonPending: the secret was created and has not claimed its slot yet.
	ReasonPending = "Pending"
	// ReasonSlotOccupied: another active secret holds the slot; supersede it to replace it.
	ReasonSlotOccupied = "SlotOccupied"
	// ReasonValueMissing: the referenced Secret is granted but its key is missing,
	// empty or too large.
	ReasonValueMissing = "ValueMissing"
	// ReasonSecretNotGranted: the referenced Secret does not exist, or is not granted
	// to this HostedSecret: it does not carry the label
	// hub.podium.dev/hosted-secret=<this HostedSecret's name>, or it is bound to another
	// HostedSecret UID. Whoever may write the Secret grants it with that label; without
	// it Podium neither reads nor adopts it, so that the right to create a HostedSecret
	// is not a way to read or delete Secrets. The two cases read the same, so that a
	// status tells nobody which Secrets exist (docs/secrets.md, "Ownership").
	ReasonSecretNotGranted = "SecretNotGranted"
	// ReasonRevoked: the secret was revoked (status.reason says why).
	ReasonRevoked = "Revoked"
)

// SecretValueRef points at the Kubernetes Secret that holds the value: in the
// HostedSecret's own namespace, or (namespace set, by the operator only) in the
// operator's value namespace (docs/design/secrets.md, "Where values live").
type SecretValueRef struct {
	// namespace of the Secret; unset means the HostedSecret's own namespace. Only the
	// operator sets it (the admission policy podium-hostedsecret-ownership refuses anyone
	// without the verb place-values on hostedsecrets): values stored over HTTP live in the
	// operator's value namespace, which org members cannot read. It may be set once on an
	// existing object (the operator moving a value there), never changed or removed.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Namespace string `json:"namespace,omitempty"`
	// name of the Secret: a Kubernetes object name (lower-case letters, digits, '-' and
	// '.', starting and ending with a letter or digit).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`
	// key in the Secret's data; default "value". Letters, digits, '-', '_' and '.'.
	// +optional
	// +kubebuilder:default=value
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	Key string `json:"key,omitempty"`
}

// HostedSecretSpec is a stored secret's metadata (docs/secrets.md). The value itself lives
// only in the referenced Kubernetes Secret and is never shown back.
// +kubebuilder:validation:XValidation:rule="self.scope != 'job' || has(self.jobID)",message="jobID is required when scope is job"
// +kubebuilder:validation:XValidation:rule="self.scope != 'user' || !has(self.jobID)",message="jobID must not be set when scope is user"
// +kubebuilder:validation:XValidation:rule="self.scope != 'user' || has(self.owner)",message="owner is required when scope is user"
// +kubebuilder:validation:XValidation:rule="(self.type == 'registry') == (self.scope == 'org')",message="scope is org exactly when type is registry"
// +kubebuilder:validation:XValidation:rule="(self.type == 'registry') == has(self.registry)",message="registry is required when type is registry, and refused otherwise"
// +kubebuilder:validation:XValidation:rule="(self.type == 'registry') != has(self.envVar)",message="envVar is required when type is env, and refused when type is registry"
// +kubebuilder:validation:XValidation:rule="self.scope != 'org' || (!has(self.owner) && !has(self.jobID))",message="owner and jobID must not be set when scope is org"
type HostedSecretSpec struct {
	// type is env (default: exported as an environment variable) or registry (a
	// container registry credential, handed to a run as an imagePullSecret). Immutable.
	// +optional
	// +kubebuilder:default=env
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="type is immutable"
	Type SecretType `json:"type,omitempty"`
	// registry names the registry and account of a registry credential (type
	// registry). Immutable.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="registry is immutable"
	Registry *RegistrySpec `json:"registry,omitempty"`
	// scope is user (default) or job; org for registry credentials. Immutable.
	// +optional
	// +kubebuilder:default=user
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="scope is immutable"
	Scope SecretScope `json:"scope,omitempty"`
	// jobID is the job's UUID; required for job scope, refused for user scope. Immutable.
	// +optional
	// +kubebuilder:validation:Pattern=`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="jobID is immutable"
	JobID string `json:"jobID,omitempty"`
	// owner is the Kubernetes user name the secret belongs to (user scope). Immutable.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="owner is immutable"
	Owner string `json:"owner,omitempty"`
	// envVar is the environment variable the secret is exported as (type env, where it
	// is required). Immutable.
	// +optional
	// +kubebuilder:validation:Pattern=`^[A-Z][A-Z0-9_]{0,63}$`
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="envVar is immutable"
	EnvVar string `json:"envVar,omitempty"`
	// provider is an optional label, for example "anthropic"; at most 64 characters, no
	// control or formatting characters (such as bidirectional overrides).
	// +optional
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="!self.matches(r'[\\p{Cc}\\p{Cf}\\p{Zl}\\p{Zp}]')",message="provider must not contain control or formatting characters (such as bidirectional overrides)"
	Provider string `json:"provider,omitempty"`
	// secretRef names the Secret holding the value. Immutable, except that the operator
	// may set its namespace once, keeping name and key (moving a value into its value
	// namespace).
	// +required
	// +kubebuilder:validation:XValidation:rule="self == oldSelf || (!has(oldSelf.__namespace__) && has(self.__namespace__) && self.name == oldSelf.name && self.key == oldSelf.key)",message="secretRef is immutable (only its namespace may be set once, by the operator moving the value)"
	SecretRef SecretValueRef `json:"secretRef"`
}

// HostedSecretStatus is the observed state of a HostedSecret.
type HostedSecretStatus struct {
	// conditions holds Ready, True when the value's Secret exists and is usable.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// observedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// state is active or revoked.
	// +optional
	State SecretState `json:"state,omitempty"`
	// reason says why a secret was revoked: revoked or superseded.
	// +optional
	Reason string `json:"reason,omitempty"`
	// supersededBy is the id of the secret that replaced this one.
	// +optional
	SupersededBy string `json:"supersededBy,omitempty"`
	// valueLast4 is the value's last four characters; empty for values shorter than 8.
	// +optional
	// +kubebuilder:validation:MaxLength=4
	ValueLast4 string `json:"valueLast4,omitempty"`
	// fingerprint identifies a registry credential's value without revealing it:
	// "hmac-sha256:" and 16 hex digits of an HMAC-SHA256 of the value under the
	// operator's key (docs/secrets.md, "Registry credentials").
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Fingerprint string `json:"fingerprint,omitempty"`
	// lastUsedAt is when the secret was last handed to a job.
	// +optional
	LastUsedAt *metav1.Time `json:"lastUsedAt,omitempty"`
	// revokedAt is when the secret was revoked.
	// +optional
	RevokedAt *metav1.Time `json:"revokedAt,omitempty"`
}

// HostedSecret is a reusable secret (a model provider key or a task's environment
// variable) scoped to a user or a job of an organization (the namespace).
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=hs,categories=podium
// +kubebuilder:printcolumn:name="Env",type=string,JSONPath=`.spec.envVar`
// +kubebuilder:printcolumn:name="Registry",type=string,JSONPath=`.spec.registry.displayName`,priority=1
// +kubebuilder:printcolumn:name="Scope",type=string,JSONPath=`.spec.scope`
// +kubebuilder:printcolumn:name="Provider",type=string,JSONPath=`.spec.provider`
// +kubebuilder:printcolumn:name="Last4",type=string,JSONPath=`.status.valueLast4`
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.state`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Owner",type=string,JSONPath=`.spec.owner`,priority=1
// +kubebuilder:printcolumn:name="Job",type=string,JSONPath=`.spec.jobID`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type HostedSecret struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the object's standard metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the secret's metadata.
	// +required
	Spec HostedSecretSpec `json:"spec"`
	// status is the observed state.
	// +optional
	Status HostedSecretStatus `json:"status,omitempty"`
}

// HostedSecretList contains a list of HostedSecret.
// +kubebuilder:object:root=true
type HostedSecretList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []HostedSecret `json:"items"`
}

func init() {
	SchemeBuilder.Register(&HostedSecret{}, &HostedSecretList{})
}
