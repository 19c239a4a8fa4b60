package hub

import (
	"encoding/json"

	"podium.dev/podium/internal/wire"
)

// BoardFile is a leaderboard definition file (snake_case; docs/cli.md, Files), the shape of
// `init`, `export` and `create/update --config` files. LeaderboardID and
// ExpectedUpdatedAt are written by export: update checks them, create ignores them.
type BoardFile struct {
	LeaderboardID      string          `json:"leaderboard_id,omitempty"`
	ExpectedUpdatedAt  string          `json:"expected_updated_at,omitempty"`
	Package            string          `json:"package,omitempty"`
	PackageID          string          `json:"package_id,omitempty"`
	Name               string          `json:"name"`
	Title              string          `json:"title"`
	Description        *string         `json:"description,omitempty"`
	Visibility         string          `json:"visibility,omitempty"`
	MetadataSchema     json.RawMessage `json:"metadata_schema,omitempty"`
	MetricsSchema      json.RawMessage `json:"metrics_schema,omitempty"`
	Columns            []wire.Column   `json:"columns,omitempty"`
	RankBy             []wire.RankRule `json:"rank_by,omitempty"`
	DatasetVersionRefs *[]string       `json:"dataset_version_refs,omitempty"`
	DatasetVersionIDs  *[]string       `json:"dataset_version_ids,omitempty"`
}

// RowsFile is a rows file (docs/cli.md, Files). Exports also carry the board's identity, which
// `update --rows` checks.
type RowsFile struct {
	LeaderboardID string    `json:"leaderboard_id,omitempty"`
	Package       string    `json:"package,omitempty"`
	Name          string    `json:"name,omitempty"`
	Rows          []RowFile `json:"rows"`
}

// RowFile is a row of a rows file. ID and ExpectedUpdatedAt are written by export: a row with
// an id updates that row (refused as stale when it changed since), one without is new.
// LeaderboardID is set only in a one-row export (`row export <row-id>`).
type RowFile struct {
	LeaderboardID     string          `json:"leaderboard_id,omitempty"`
	ID                string          `json:"id,omitempty"`
	ExpectedUpdatedAt string          `json:"expected_updated_at,omitempty"`
	Metadata          json.RawMessage `json:"metadata,omitempty"`
	Metrics           json.RawMessage `json:"metrics,omitempty"`
	Status            string          `json:"status,omitempty"`
	TrialIDs          *[]string       `json:"trial_ids,omitempty"`
}

// TrialIDsFile is the file of `row trial set --trial-ids-file`.
type TrialIDsFile struct {
	TrialIDs []string `json:"trial_ids"`
}
