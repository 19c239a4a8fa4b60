package v1alpha1

// Annotations and labels of secret delivery into Jobs and Pods (docs/secrets.md,
// "Delivery into Jobs and Pods").
const (
	// AnnotationSecrets on a batch/v1 Job or a bare Pod asks for hosted secrets by
	// environment variable name, comma-separated: "ANTHROPIC_API_KEY,OPENAI_API_KEY".
	AnnotationSecrets = "hub.podium.dev/secrets"
	// AnnotationJobID names the job (a UUID) whose job-scope secrets come first.
	AnnotationJobID = "hub.podium.dev/job-id"
	// AnnotationRegistryCredentials on a Job or bare Pod asks for the organization's
	// registry credentials by display name, comma-separated: "GHCR bot,Docker Hub". They
	// are handed to the run as an imagePullSecret.
	AnnotationRegistryCredentials = "hub.podium.dev/registry-credentials"
	// AnnotationModels names the models (or agent=model pairs) of the run, so that the
	// admission warnings say which model a missing key was for.
	AnnotationModels = "hub.podium.dev/models"

	// AnnotationRequester is recorded by admission: the Kubernetes user who created the
	// Job or Pod. A value the client supplies is replaced.
	AnnotationRequester = "hub.podium.dev/requester"
	// AnnotationDelivered is recorded by admission: the environment variables delivered.
	AnnotationDelivered = "hub.podium.dev/delivered"
	// AnnotationDeliveredRegistry is recorded by admission: the display names of the
	// registry credentials delivered as an imagePullSecret.
	AnnotationDeliveredRegistry = "hub.podium.dev/delivered-registry-credentials"
	// LabelRunSecret is recorded by admission on a Job or bare Pod that got secrets: the
	// name of its run Secret. A value the client supplies is removed or replaced.
	LabelRunSecret = "hub.podium.dev/run-secret"

	// LabelRunFor is on every run Secret: the kind it was made for (Job or Pod).
	LabelRunFor = "hub.podium.dev/run-for"
	// AnnotationRunHostedSecrets is on every run Secret: the HostedSecret UIDs whose
	// values it holds, "ENV_VAR=uid" comma-separated (never a value).
	AnnotationRunHostedSecrets = "hub.podium.dev/hosted-secrets"

	// AnnotationUserServiceAccounts is recorded by the operator on a namespace: its
	// ServiceAccounts that hold a Podium right in another namespace through a RoleBinding
	// there, comma-separated; "*" stands for all of them. The admission policy
	// podium-run-identity-elsewhere reads it.
	AnnotationUserServiceAccounts = "hub.podium.dev/user-serviceaccounts"
	// LabelUserServiceAccounts marks the namespaces that have that annotation, so that
	// the policy's binding selects them and no other namespace pays for it.
	LabelUserServiceAccounts = "hub.podium.dev/user-serviceaccounts"
)
