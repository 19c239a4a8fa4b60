package hub

import "encoding/json"

// BoardFile is a leaderboard definition as SPEC 2.2 writes it (snake_case), the shape of
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
	Columns            []ColumnFile    `json:"columns,omitempty"`
	RankBy             []RankRuleFile  `json:"rank_by,omitempty"`
	DatasetVersionRefs *[]string       `json:"dataset_version_refs,omitempty"`
	DatasetVersionIDs  *[]string       `json:"dataset_version_ids,omitempty"`
}

// ColumnFile is SPEC 2.3's column.
type ColumnFile struct {
	ID              string `json:"id"`
	Header          string `json:"header"`
	Accessor        string `json:"accessor"`
	Type            string `json:"type"`
	DisplayAccessor string `json:"display_accessor,omitempty"`
	DisplayType     string `json:"display_type,omitempty"`
	Align           string `json:"align,omitempty"`
	Description     string `json:"description,omitempty"`
	EnableSorting   *bool  `json:"enable_sorting,omitempty"`
}

// RankRuleFile is SPEC 2.4's ranking rule.
type RankRuleFile struct {
	Accessor  string `json:"accessor"`
	Direction string `json:"direction"`
	Nulls     string `json:"nulls,omitempty"`
}

// RowsFile is SPEC 2.6's rows file. Exports also carry the board's identity, which
// `update --rows` checks.
type RowsFile struct {
	LeaderboardID string    `json:"leaderboard_id,omitempty"`
	Package       string    `json:"package,omitempty"`
	Name          string    `json:"name,omitempty"`
	Rows          []RowFile `json:"rows"`
}

// RowFile is SPEC 2.5's row. ID and ExpectedUpdatedAt are written by export: a row with
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
