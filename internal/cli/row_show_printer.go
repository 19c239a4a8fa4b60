package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/cli/hub"
	"podium.dev/podium/internal/wire"
)

// print prints a row's fields, one a line, or (--json) the row.
func (o *rowShowOptions) print(lb *hubv1alpha1.Leaderboard, ranked hub.RankedRow) error {
	j := hub.RowToJSON(hubv1alpha1.ID(lb), ranked)
	if o.json {
		return o.printJSON(j)
	}
	w := o.stdout
	fmt.Fprintf(w, "ID:          %s\nLeaderboard: %s (%s)\nRank:        %s\nStatus:      %s\nMetadata:    %s\nMetrics:     %s\nTrials:      %d\nCreated:     %s\nUpdated:     %s\n",
		j.ID, hub.Slug(lb), hubv1alpha1.ID(lb), rankText(ranked.Rank), statusText(j), compact(j.Metadata), compact(j.Metrics), j.NTrials, j.CreatedAt, j.UpdatedAt)
	for _, f := range j.InvalidFields {
		fmt.Fprintf(w, "Invalid:     %s: %s\n", f.Field, f.Message)
	}
	printProvenance(w, j.Provenance)
	if len(j.TrialIDs) > 0 {
		fmt.Fprintf(w, "Trial IDs:   %s\n", strings.Join(j.TrialIDs, "\n             "))
	}
	return nil
}

// printProvenance prints whether a run Podium admitted wrote the row and which
// (docs/verified-rows.md).
func printProvenance(w io.Writer, p *wire.Provenance) {
	if p == nil {
		fmt.Fprintf(w, "Verified:    no\n")
		return
	}
	fmt.Fprintf(w, "Verified:    yes\n")
	if p.Requester != nil {
		fmt.Fprintf(w, "Run by:      %s\n", *p.Requester)
	}
	if p.JobID != nil {
		fmt.Fprintf(w, "Job ID:      %s\n", *p.JobID)
	}
	for _, img := range p.Images {
		fmt.Fprintf(w, "Image:       %s: %s (%s)\n", img.Container, img.Image, img.Digest)
	}
	if p.RanAt != nil {
		fmt.Fprintf(w, "Ran at:      %s\n", *p.RanAt)
	}
	if len(p.DatasetVersionIDs) > 0 {
		fmt.Fprintf(w, "Versions:    %s\n", strings.Join(p.DatasetVersionIDs, ", "))
	}
}

// compact writes a JSON value on one line.
func compact(r json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, r) != nil {
		return string(r)
	}
	return b.String()
}
