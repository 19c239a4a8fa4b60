package v1alpha1

// Labels and annotations Podium puts on the objects it manages.
const (
	// LabelLeaderboard carries the object name of the Leaderboard a row belongs to.
	LabelLeaderboard = "hub.podium.dev/leaderboard"
	// LabelID carries an object's own UID, so that a record can be found by its id with
	// a label selector instead of a scan of a namespace.
	LabelID = "hub.podium.dev/id"
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
