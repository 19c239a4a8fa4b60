package hub

import (
	"cmp"
	"context"
	"encoding/json"
	"strings"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/apierr"
	"podium.dev/podium/internal/wire"
)

// ExportBoard renders a board's definition (read with Settle) as a file: the file's fields with
// leaderboard_id and expected_updated_at, or (format manifest) the board and all its
// rows as Kubernetes manifests.
func (c *Client) ExportBoard(ctx context.Context, lb *hubv1alpha1.Leaderboard, format, fileFormat Format) ([]byte, error) {
	if format == FormatManifest {
		rows, err := c.BoardRows(ctx, lb)
		if err != nil {
			return nil, err
		}
		sortByCreation(rows)
		return RenderManifest(lb, rows, fileFormat)
	}
	f := FileFromSpec(&lb.Spec)
	full := boardExport{
		LeaderboardID: hubv1alpha1.ID(lb), ExpectedUpdatedAt: UpdatedAt(lb),
		Package: f.Package, PackageID: f.PackageID, Name: f.Name, Title: f.Title, Description: f.Description,
		Visibility:     cmp.Or(f.Visibility, string(hubv1alpha1.VisibilityPrivate)),
		MetadataSchema: objectOrEmpty(lb.Spec.MetadataSchema), MetricsSchema: objectOrEmpty(lb.Spec.MetricsSchema),
		Columns: f.Columns, RankBy: f.RankBy, DatasetVersionRefs: f.DatasetVersionRefs, DatasetVersionIDs: f.DatasetVersionIDs,
	}
	if full.Columns == nil {
		full.Columns = []wire.Column{}
	}
	if full.RankBy == nil {
		full.RankBy = []wire.RankRule{}
	}
	return Marshal(full, fileFormat)
}

// boardExport is what export writes: a BoardFile holding every definition key, even
// empty ones (null description, {} schemas, [] columns and rank_by), so that `update
// --config` of the edited file replaces the whole definition (update changes only
// the keys a file holds). dataset_version_refs and _ids are written when set.
type boardExport struct {
	LeaderboardID      string          `json:"leaderboard_id"`
	ExpectedUpdatedAt  string          `json:"expected_updated_at"`
	Package            string          `json:"package,omitempty"`
	PackageID          string          `json:"package_id,omitempty"`
	Name               string          `json:"name"`
	Title              string          `json:"title"`
	Description        *string         `json:"description"`
	Visibility         string          `json:"visibility"`
	MetadataSchema     json.RawMessage `json:"metadata_schema"`
	MetricsSchema      json.RawMessage `json:"metrics_schema"`
	Columns            []wire.Column   `json:"columns"`
	RankBy             []wire.RankRule `json:"rank_by"`
	DatasetVersionRefs *[]string       `json:"dataset_version_refs,omitempty"`
	DatasetVersionIDs  *[]string       `json:"dataset_version_ids,omitempty"`
}

// InitFile is the example definition `init` writes (docs/cli.md): an agent text column,
// a reward number column, ranked by reward, highest first, missing rewards last.
func InitFile(pkg, name, title string) BoardFile {
	desc := "Results of agents on " + pkg + "."
	enable := true
	return BoardFile{
		Package:        pkg,
		Name:           name,
		Title:          title,
		Description:    &desc,
		Visibility:     string(hubv1alpha1.VisibilityPrivate),
		MetadataSchema: json.RawMessage(`{"type":"object","properties":{"agent":{"type":"string"}},"required":["agent"]}`),
		MetricsSchema:  json.RawMessage(`{"type":"object","properties":{"reward":{"type":["number","null"]}}}`),
		Columns: []wire.Column{
			{ID: "agent", Header: "Agent", Accessor: "metadata.agent", Type: string(hubv1alpha1.ColumnText)},
			{ID: "reward", Header: "Reward", Accessor: "metrics.reward", Type: string(hubv1alpha1.ColumnNumber), Align: "right", EnableSorting: &enable},
		},
		RankBy: []wire.RankRule{{Accessor: "metrics.reward", Direction: string(hubv1alpha1.Descending), Nulls: string(hubv1alpha1.NullsLast)}},
	}
}

// InitManifest is the init example as a Leaderboard manifest.
func InitManifest(pkg, name, title string, f Format) ([]byte, error) {
	file := InitFile(pkg, name, title)
	lb := &hubv1alpha1.Leaderboard{Spec: SpecFromFile(&file)}
	org, ds, ok := strings.Cut(pkg, "/")
	if !ok {
		return nil, apierr.BadRequest("package", "%q is not <org>/<dataset>", pkg)
	}
	lb.Namespace, lb.Name = org, BoardObjectName(ds, name)
	return RenderManifest(lb, nil, f)
}
