package web

import (
	"net/http"
	"net/url"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/boardaccess"
	"podium.dev/podium/internal/boardres"
	"podium.dev/podium/internal/httpapi"
	"podium.dev/podium/internal/rowhistory"
)

// rowNotFound is the page of a missing row and of a row the caller may not see: the
// same bytes, as for boards.
var rowNotFound = errorPage{
	Status:  http.StatusNotFound,
	Heading: "Row not found",
	Message: "There is no row at this address that you can see.",
}

// boardURL is the page of a board.
func boardURL(lb *hubv1alpha1.Leaderboard) string {
	slug := boardres.Slug(lb)
	parts := strings.SplitN(slug, "/", 3)
	for i := range parts {
		parts[i] = url.PathEscape(parts[i])
	}
	return "/leaderboards/" + strings.Join(parts, "/")
}

// serveHistory serves a row's change history page with the rules of the JSON row
// history (docs/http-api.md, "Row history"; boardaccess.Access): a ranked row of a public
// board for anyone, any other row for the board's members, the same 404 otherwise.
func (p *Pages) serveHistory(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	lb, private, ok := p.readableBoard(w, r)
	if !ok {
		return
	}
	var row *hubv1alpha1.LeaderboardRow
	var err error
	if id := r.PathValue("row"); hubv1alpha1.IsUUID(id) {
		if row, err = p.rows.Row(ctx, p.o.Reader, lb, types.UID(strings.ToLower(id))); err != nil {
			p.fail(w, r, err, "Reading a leaderboard row", "leaderboard", client.ObjectKeyFromObject(lb))
			return
		}
	}
	public := boardaccess.PublicRow(lb, row)
	if row, err = p.access.Row(ctx, lb, row); err != nil {
		p.refuse(w, r, err, rowNotFound, private)
		return
	}
	if row, err = httpapi.Full(ctx, p.o.API, row); err != nil {
		p.fail(w, r, err, "Reading a leaderboard row", "leaderboard", client.ObjectKeyFromObject(lb))
		return
	}
	if row == nil {
		p.render(w, r, rowNotFound.Status, "error", rowNotFound, private)
		return
	}
	show := httpapi.ShowsAuthors(lb)
	h := rowhistory.Served(hubv1alpha1.ID(lb), row, show)
	page := historyPage{Title: "Row history · " + lb.Spec.Title, BoardTitle: lb.Spec.Title, BoardURL: boardURL(lb),
		Org: r.PathValue("org"), Dataset: r.PathValue("dataset"), Name: r.PathValue("name"), RowID: h.RowID, ShowAuthors: show,
		Chart: historyChart(lb, row)}
	if h.CreatedBy != nil {
		page.CreatedBy = *h.CreatedBy
	}
	for _, c := range h.Changes {
		by := "-"
		if c.By != nil {
			by = *c.By
		}
		for _, f := range c.Fields {
			page.Lines = append(page.Lines, historyLine{When: c.At, By: by, Field: f.Field,
				Old: rowhistory.Text(f.Old, f.OldTruncated), New: rowhistory.Text(f.New, f.NewTruncated)})
		}
		if c.OmittedFields > 0 {
			page.Lines = append(page.Lines, historyLine{When: c.At, By: by, Field: "(more fields not kept)"})
		}
	}
	p.render(w, r, http.StatusOK, "history", page, !public)
}
