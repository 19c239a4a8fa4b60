package hub

import (
	"encoding/json"

	"podium.dev/podium/internal/apierr"
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
// `update --rows` checks; Harbor's rows export also carries the board's updated_at as
// ExpectedUpdatedAt, checked like a definition file's.
type RowsFile struct {
	LeaderboardID     string    `json:"leaderboard_id,omitempty"`
	ExpectedUpdatedAt string    `json:"expected_updated_at,omitempty"`
	Package           string    `json:"package,omitempty"`
	Name              string    `json:"name,omitempty"`
	Rows              []RowFile `json:"rows"`
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

// Config is a definition file as read: a snake_case board file, or manifests (docs/cli.md, Files).
type Config struct {
	File *BoardFile
	// Keys are the top-level keys the file holds: on update, only they change.
	Keys     map[string]bool
	Manifest *Manifest
}

// LoadConfig reads a definition file (YAML or JSON by extension, or Kubernetes
// manifests as `export --format manifest` writes them).
func LoadConfig(path string) (*Config, error) {
	docs, err := readDocuments(path)
	if err != nil {
		return nil, err
	}
	if isManifest(docs[0]) {
		m, err := parseManifest(docs)
		if err != nil {
			return nil, err
		}
		return &Config{Manifest: m}, nil
	}
	f, err := decodeOne[BoardFile](path, "a definition file", docs)
	if err != nil {
		return nil, err
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(docs[0].json, &keys); err != nil {
		return nil, apierr.BadRequest("", "%s: a definition file is an object", path)
	}
	cfg := &Config{File: f, Keys: map[string]bool{}}
	for k := range keys {
		cfg.Keys[k] = true
	}
	return cfg, nil
}

// LoadRows reads a rows file ({rows: [...]}).
func LoadRows(path string) (*RowsFile, error) {
	docs, err := readDocuments(path)
	if err != nil {
		return nil, err
	}
	f, err := decodeOne[RowsFile](path, "a rows file", docs)
	if err != nil {
		return nil, err
	}
	if f.Rows == nil {
		return nil, docs[0].fieldError([]any{"rows"}, "is required: a list of rows")
	}
	return f, nil
}

// LoadRow reads a one-row file (what `row export <row-id>` writes).
func LoadRow(path string) (*RowFile, error) {
	docs, err := readDocuments(path)
	if err != nil {
		return nil, err
	}
	return decodeOne[RowFile](path, "a row file", docs)
}

// decodeOne decodes a file that holds one document (what names the kind of file)
// strictly into a T.
func decodeOne[T any](path, what string, docs []document) (*T, error) {
	if len(docs) > 1 {
		return nil, apierr.BadRequest("", "%s: holds %d documents; %s holds one", path, len(docs), what)
	}
	var f T
	if err := docs[0].decodeStrict(&f); err != nil {
		return nil, err
	}
	return &f, nil
}

// LoadTrialIDs reads a --trial-ids-file: a non-empty trial_ids list.
func LoadTrialIDs(path string) ([]string, error) {
	docs, err := readDocuments(path)
	if err != nil {
		return nil, err
	}
	var f TrialIDsFile
	if err := docs[0].decodeStrict(&f); err != nil {
		return nil, err
	}
	if len(f.TrialIDs) == 0 {
		return nil, docs[0].fieldError([]any{"trial_ids"}, "must be a non-empty list")
	}
	if i, j := DuplicateTrialID(f.TrialIDs); j >= 0 {
		return nil, docs[0].fieldError([]any{"trial_ids", j}, "trial %s is given twice (also trial_ids[%d])", f.TrialIDs[j], i)
	}
	return f.TrialIDs, nil
}
