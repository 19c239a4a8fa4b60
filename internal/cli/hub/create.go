package hub

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/apierr"
)

// MaxRowsPerRequest is the limit of new rows per create request (docs/cli.md).
const MaxRowsPerRequest = 500

// Created is the result of a create.
type Created struct {
	Board *hubv1alpha1.Leaderboard
	Rows  []*hubv1alpha1.LeaderboardRow
}

// CreateBoard creates a leaderboard from a definition file, with rows from the
// config's manifests and/or a rows file, all or nothing: everything is validated
// (client side, then a server-side dry-run) before the first write, and a failed write
// removes what was created.
func (c *Client) CreateBoard(ctx context.Context, cfg *Config, rows *RowsFile, over BoardFlags) (*Created, error) {
	now := time.Now()
	lb, manifestRows, err := c.boardToCreate(ctx, cfg, over)
	if err != nil {
		return nil, err
	}
	touch(lb, now)
	var inputs []RowInput
	for i := range manifestRows {
		inputs = append(inputs, RowInput{Index: i, Spec: manifestRows[i].Spec})
	}
	if rows != nil {
		if n := len(rows.Rows); n < 1 || n > MaxRowsPerRequest {
			return nil, apierr.BadRequest("rows", "%d rows; a rows file adds 1 to %d rows", n, MaxRowsPerRequest)
		}
		for i := range rows.Rows {
			if rows.Rows[i].ID != "" {
				return nil, apierr.BadRequest(fmt.Sprintf("rows[%d].id", i), "a new leaderboard's rows are new: remove the id")
			}
			inputs = append(inputs, RowInput{Index: len(manifestRows) + i, Spec: RowSpecFromFile(lb.Name, &rows.Rows[i])})
		}
	}
	if err := c.ValidateRows(&lb.Spec, inputs); err != nil {
		return nil, err
	}
	p := &plan{board: &write{obj: lb, index: -1, what: "leaderboard " + Slug(lb)}}
	for i, in := range inputs {
		var row *hubv1alpha1.LeaderboardRow
		if i < len(manifestRows) {
			m := manifestRows[i]
			row = &hubv1alpha1.LeaderboardRow{Spec: m.Spec}
			row.Name, row.GenerateName, row.Namespace = m.Name, m.GenerateName, lb.Namespace
			row.Labels, row.Annotations = cleanLabels(m.Labels), cleanAnnotations(m.Annotations)
			if row.Name == "" && row.GenerateName == "" {
				row.GenerateName = lb.Name + "-"
			}
			ownRow(row, lb)
			touch(row, now)
		} else {
			row = NewRow(lb, in.Spec, now)
		}
		p.rows = append(p.rows, &write{obj: row, index: in.Index, what: fmt.Sprintf("rows[%d]", in.Index), row: true})
	}
	p.beforeRows = func(board client.Object) {
		for _, w := range p.rows {
			ownRow(w.obj.(*hubv1alpha1.LeaderboardRow), board)
		}
	}
	if err := c.execute(ctx, p, true); err != nil {
		return nil, err
	}
	c.awaitNewRowIDs(ctx, lb, p)
	out := &Created{Board: lb}
	for _, w := range p.rows {
		out.Rows = append(out.Rows, w.obj.(*hubv1alpha1.LeaderboardRow))
	}
	return out, nil
}

// BoardFlags are the definition flags of `create`: set ones override the --config
// file's values (a board can be created from flags alone).
type BoardFlags struct {
	Package, Name, Title string
	DefinitionFlags
}

func (f BoardFlags) apply(s *hubv1alpha1.LeaderboardSpec) {
	if f.Package != "" {
		s.Package, s.PackageID = f.Package, ""
	}
	if f.Name != "" {
		s.Name = f.Name
	}
	if f.Title != "" {
		s.Title = f.Title
	}
	f.DefinitionFlags.apply(s)
}

// DefinitionFlags are the definition flags of create and update (docs/cli.md): a flag
// given overrides the file's value.
type DefinitionFlags struct {
	Description *string
	Visibility  string
	// VersionFlags is true when a dataset-version flag was given: Refs and IDs then
	// replace the associations (the file's, or the board's).
	VersionFlags bool
	Refs, IDs    []string
}

func (f DefinitionFlags) apply(s *hubv1alpha1.LeaderboardSpec) {
	if f.Description != nil {
		d := *f.Description
		s.Description = &d
	}
	if f.Visibility != "" {
		s.Visibility = hubv1alpha1.Visibility(f.Visibility)
	}
	if f.VersionFlags {
		refs, ids := append([]string{}, f.Refs...), append([]string{}, f.IDs...)
		s.DatasetVersionRefs, s.DatasetVersionIDs = &refs, &ids
	}
}

// boardToCreate builds the Leaderboard object a definition (a file, flags, or both)
// describes: its namespace is the dataset's org, its object name derived from the slug
// (or the manifest's).
func (c *Client) boardToCreate(ctx context.Context, cfg *Config, over BoardFlags) (*hubv1alpha1.Leaderboard, []hubv1alpha1.LeaderboardRow, error) {
	lb := &hubv1alpha1.Leaderboard{}
	var rows []hubv1alpha1.LeaderboardRow
	switch {
	case cfg == nil:
	case cfg.Manifest != nil:
		m := cfg.Manifest.Board
		lb.Spec = *m.Spec.DeepCopy()
		lb.Name, lb.Namespace = m.Name, m.Namespace
		lb.Labels, lb.Annotations = cleanLabels(m.Labels), cleanAnnotations(m.Annotations)
		rows = cfg.Manifest.Rows
	default:
		lb.Spec = SpecFromFile(cfg.File)
	}
	over.apply(&lb.Spec)
	var missing []apierr.FieldError
	if lb.Spec.Package == "" && lb.Spec.PackageID == "" {
		missing = append(missing, apierr.FieldError{Field: "package", Message: "is required (--package, or package or package_id in --config)"})
	}
	if lb.Spec.Name == "" {
		missing = append(missing, apierr.FieldError{Field: "name", Message: "is required (--name, or name in --config)"})
	}
	if lb.Spec.Title == "" {
		missing = append(missing, apierr.FieldError{Field: "title", Message: "is required (--title, or title in --config)"})
	}
	if len(missing) > 0 {
		e := apierr.BadRequest("", "%s", missingText(missing))
		e.Details = missing
		return nil, nil, e
	}
	org, dataset, err := c.datasetOf(ctx, &lb.Spec)
	if err != nil {
		return nil, nil, err
	}
	if lb.Namespace != "" && lb.Namespace != org {
		return nil, nil, apierr.BadRequest("metadata.namespace", "%q is not the dataset's org %q", lb.Namespace, org)
	}
	lb.Namespace = org
	if lb.Name == "" {
		lb.Name = BoardObjectName(dataset, lb.Spec.Name)
	}
	if err := c.refuseExisting(ctx, org+"/"+dataset, lb); err != nil {
		return nil, nil, err
	}
	return lb, rows, nil
}

// refuseExisting answers 409 conflict when the org already has a board of this slug
// (or of this object name): creating it again is not a validation problem of the file.
func (c *Client) refuseExisting(ctx context.Context, pkg string, lb *hubv1alpha1.Leaderboard) error {
	var list hubv1alpha1.LeaderboardList
	if err := c.c.List(ctx, &list, client.InNamespace(lb.Namespace)); err != nil {
		return KubeError(err, "leaderboards of "+lb.Namespace)
	}
	for i := range list.Items {
		cur := &list.Items[i]
		samePkg := cmp.Or(cur.Spec.Package, cur.Status.Package) == pkg
		if cur.Name == lb.Name || cur.Spec.Name == lb.Spec.Name && samePkg {
			e := apierr.New(http.StatusConflict, apierr.CodeConflict,
				"leaderboard %s/%s already exists (id %s); change it with `podium hub leaderboard update`", pkg, lb.Spec.Name, hubv1alpha1.ID(cur))
			e.Details = map[string]string{"resource": "leaderboard " + pkg + "/" + lb.Spec.Name, "id": hubv1alpha1.ID(cur)}
			return e
		}
	}
	return nil
}

// datasetOf returns the org (namespace) and dataset name of a definition's package or
// package_id.
func (c *Client) datasetOf(ctx context.Context, s *hubv1alpha1.LeaderboardSpec) (string, string, error) {
	switch {
	case s.Package != "" && s.PackageID != "":
		return "", "", apierr.BadRequest("package_id", "package and package_id are mutually exclusive")
	case s.Package != "":
		org, ds, ok := strings.Cut(s.Package, "/")
		if !ok || org == "" || ds == "" || strings.Contains(ds, "/") {
			return "", "", apierr.BadRequest("package", "%q is not <org>/<dataset>", s.Package)
		}
		return org, ds, nil
	case s.PackageID != "":
		var list hubv1alpha1.DatasetList
		if err := c.findByID(ctx, &list, s.PackageID); err != nil {
			return "", "", KubeError(err, "dataset "+s.PackageID)
		}
		for _, d := range list.Items {
			if strings.EqualFold(hubv1alpha1.ID(&d), s.PackageID) {
				return d.Namespace, d.Name, nil
			}
		}
		// Datasets are few per org: without the id label, look through --org's.
		if c.org != "" {
			var all hubv1alpha1.DatasetList
			if err := c.c.List(ctx, &all, client.InNamespace(c.org)); err != nil {
				return "", "", KubeError(err, "datasets of "+c.org)
			}
			for _, d := range all.Items {
				if strings.EqualFold(hubv1alpha1.ID(&d), s.PackageID) {
					return d.Namespace, d.Name, nil
				}
			}
		}
		return "", "", apierr.BadRequest("package_id", "no dataset has id %s", s.PackageID)
	}
	return "", "", apierr.BadRequest("package", "one of package or package_id is required")
}

// missingText says which required fields are missing, all of them.
func missingText(missing []apierr.FieldError) string {
	names := make([]string, len(missing))
	for i, m := range missing {
		names[i] = m.Field
	}
	if len(names) == 1 {
		return missing[0].Field + ": " + missing[0].Message
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1] + " are required (flags, or keys of --config)"
}
