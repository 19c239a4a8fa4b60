package v1alpha1

// Labels and annotations Podium puts on the objects it manages.
const (
	// LabelLeaderboard carries the object name of the Leaderboard a row belongs to.
	LabelLeaderboard = "hub.podium.dev/leaderboard"
	// LabelID carries an object's own UID, so that a record can be found by its id with
	// a label selector instead of a scan of a namespace.
	LabelID = "hub.podium.dev/id"
	// AnnotationUpdatedAt records, as an RFC 3339 time, when a writer (the CLI) last
	// changed an object. The read serves it as updated_at when it is the latest change
	// it knows of; the CLI's export token starts from it (docs/http-api.md, docs/cli.md).
	AnnotationUpdatedAt = "hub.podium.dev/updated-at"
	// AnnotationUpdatedBy records who last changed a LeaderboardRow's values (spec): the
	// Kubernetes user of the create or of the last update that changed spec, set by the
	// apiserver at admission (config/admission/row_metadata.yaml, docs/leaderboards.md).
	AnnotationUpdatedBy = "hub.podium.dev/updated-by"
	// LabelManagedBy marks Kubernetes Secrets that hold hosted secret values; the
	// operator caches only Secrets with this label.
	LabelManagedBy = "app.kubernetes.io/managed-by"
	// ManagedByPodium is the value of LabelManagedBy on Podium's Secrets.
	ManagedByPodium = "podium"
)

// Condition types shared by Podium's kinds.
const (
	// ConditionReady is True when an object is valid and usable: a Dataset, a Leaderboard,
	// a LeaderboardRow that is Valid, an active HostedSecret.
	ConditionReady = "Ready"
	// ConditionValid is True when a LeaderboardRow's values match its board's schemas.
	ConditionValid = "Valid"
	// ConditionStalled is True, beside Ready=False, when an object cannot become ready
	// without a change from its author (kstatus: Failed). Absent otherwise.
	ConditionStalled = "Stalled"
	// ConditionReconciling is True, beside Ready=False, while an object waits for
	// something expected to happen, such as another object (kstatus: InProgress).
	// Absent otherwise.
	ConditionReconciling = "Reconciling"
)

// UUIDPattern matches a canonical lowercase or uppercase UUID.
const UUIDPattern = `^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`

// IsUUID reports whether s matches UUIDPattern (without a regexp engine: the read checks
// every request's id). Every id Podium accepts, in the API, the read and the CLI, is
// checked here.
func IsUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if c != '-' {
				return false
			}
			continue
		}
		isHex := '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
		if !isHex {
			return false
		}
	}
	return true
}
