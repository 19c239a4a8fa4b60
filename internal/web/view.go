package web

import (
	"html/template"
	"net/url"
	"strconv"
	"time"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/rowhistory"
	"podium.dev/podium/internal/wire"
)

// PageSize is the number of rows on one page of a board, as the JSON read's default.
const PageSize = 50

// boardPage is what the board template shows.
type boardPage struct {
	Title       string
	Description string
	Private     bool
	Org         string
	Dataset     string
	Name        string
	Versions    []versionView
	Columns     []columnView
	Rows        []rowView
	// Ranges is true when the board's rules name an uncertainty: the table has a
	// Range column.
	Ranges bool

	Total      int
	Page       int
	TotalPages int
	FirstRow   int
	LastRow    int
	PrevURL    string
	NextURL    string
	FirstURL   string
	LastURL    string

	// SortedBy is the header of the column the rows are sorted by, "" in rank order.
	SortedBy   string
	SortDir    string
	ResetURL   string
	SortNotice string

	// Verified is true when only verified rows are shown; VerifiedURL and AllURL
	// switch between them.
	Verified    bool
	VerifiedURL string
	AllURL      string

	// Charts are the board's charts, on the first page of a board that ranks by
	// something; nil otherwise.
	Charts *chartView
}

// TableColumns is the number of columns of the table: rank, the range if any, and the
// board's columns.
func (p *boardPage) TableColumns() int {
	n := len(p.Columns) + 1
	if p.Ranges {
		n++
	}
	return n
}

type versionView struct {
	ID  string
	Tag string
}

type columnView struct {
	ID          string
	Header      string
	Description string
	Align       string
	// SortURL is the link that sorts by the column, "" when it is not sortable.
	SortURL string
	// AriaSort is "ascending" or "descending" on the column the rows are sorted by.
	AriaSort string
}

type rowView struct {
	Rank  int
	Cells []cellView
	// Range is the ranks the row's uncertainty supports ("2–5", or "5" when only its
	// own), on boards whose rules name an uncertainty; RangeTitle explains it.
	Range      string
	RangeTitle string
	// ChangedOn is the date of the row's last change when it is recent
	// (ChangedWithin), with HistoryURL its history page; both "" otherwise.
	ChangedOn  string
	HistoryURL string
	// VerifiedTitle describes the run that wrote a verified row (docs/verified-rows.md);
	// "" when the row is not verified.
	VerifiedTitle string
}

// ChangedWithin is how recent a row's last change must be for the board page to mark it
// (docs/web.md).
const ChangedWithin = 7 * 24 * time.Hour

// historyPage is what the history template shows.
type historyPage struct {
	Title       string
	BoardTitle  string
	BoardURL    string
	Org         string
	Dataset     string
	Name        string
	RowID       string
	ShowAuthors bool
	CreatedBy   string
	Lines       []historyLine
	// Chart is the row's score over its changes ("" on a board that ranks by nothing).
	Chart template.HTML
}

// historyLine is one changed field of one change.
type historyLine struct {
	When, By, Field, Old, New string
}

type cellView struct {
	Cell
	Align string
}

// query is a board page's parsed query: ?page=N&sort=<column id>&dir=asc|desc&verified=1.
type query struct {
	Page int
	Sort string
	Dir  hubv1alpha1.Direction
	// Verified shows only verified rows (docs/verified-rows.md).
	Verified bool
	// ChartRows is how many rows the interval chart shows (?chart_rows=).
	ChartRows int
}

// queryError names the query parameter a reader got wrong.
type queryError struct {
	Param   string
	Message string
}

func (e *queryError) Error() string { return e.Param + ": " + e.Message }

// parseQuery checks a board page's query against the board's columns: page from 1,
// sort only by a column with enableSorting, dir asc or desc (default depends on the
// column type: numbers, booleans and dates start with the highest).
func parseQuery(v url.Values, columns []hubv1alpha1.Column) (query, error) {
	q := query{Page: 1}
	var err error
	if q.ChartRows, err = parseChartRows(v); err != nil {
		return q, err
	}
	if s := v.Get("page"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return q, &queryError{"page", "must be a whole number from 1"}
		}
		q.Page = n
	}
	switch v.Get("verified") {
	case "":
	case "1":
		q.Verified = true
	default:
		return q, &queryError{"verified", "must be 1"}
	}
	q.Sort = v.Get("sort")
	dir := v.Get("dir")
	if q.Sort == "" {
		if dir != "" {
			return q, &queryError{"dir", "needs sort"}
		}
		return q, nil
	}
	col, ok := findColumn(columns, q.Sort)
	if !ok {
		return q, &queryError{"sort", "no column has this id"}
	}
	if !sortable(col) {
		return q, &queryError{"sort", "this column cannot be sorted"}
	}
	switch dir {
	case "":
		q.Dir = defaultDir(col)
	case string(hubv1alpha1.Ascending), string(hubv1alpha1.Descending):
		q.Dir = hubv1alpha1.Direction(dir)
	default:
		return q, &queryError{"dir", "must be asc or desc"}
	}
	return q, nil
}

func findColumn(columns []hubv1alpha1.Column, id string) (hubv1alpha1.Column, bool) {
	for _, c := range columns {
		if c.ID == id {
			return c, true
		}
	}
	return hubv1alpha1.Column{}, false
}

func sortable(c hubv1alpha1.Column) bool { return c.EnableSorting != nil && *c.EnableSorting }

func defaultDir(c hubv1alpha1.Column) hubv1alpha1.Direction {
	switch c.Type {
	case hubv1alpha1.ColumnNumber, hubv1alpha1.ColumnBoolean, hubv1alpha1.ColumnDate:
		return hubv1alpha1.Descending
	}
	return hubv1alpha1.Ascending
}

// pageURL is the relative link to a page of the board in the given order, of the
// verified rows only when verified.
func pageURL(page int, sort string, dir hubv1alpha1.Direction, verified bool) string {
	v := url.Values{}
	if page > 1 {
		v.Set("page", strconv.Itoa(page))
	}
	if verified {
		v.Set("verified", "1")
	}
	if sort != "" {
		v.Set("sort", sort)
		v.Set("dir", string(dir))
	}
	if len(v) == 0 {
		return "?"
	}
	return "?" + v.Encode()
}

// columnViews are the board's headers, each sortable column linking to its order:
// the reverse of the current one on the sorted column, its default on the others.
func columnViews(columns []hubv1alpha1.Column, q query, canSort bool) []columnView {
	out := make([]columnView, 0, len(columns))
	for _, c := range columns {
		cv := columnView{ID: c.ID, Header: c.Header, Description: c.Description, Align: align(c)}
		if canSort && sortable(c) {
			dir := defaultDir(c)
			if q.Sort == c.ID {
				cv.AriaSort = "ascending"
				dir = hubv1alpha1.Descending
				if q.Dir == hubv1alpha1.Descending {
					cv.AriaSort = "descending"
					dir = hubv1alpha1.Ascending
				}
			}
			cv.SortURL = pageURL(1, c.ID, dir, q.Verified)
		}
		out = append(out, cv)
	}
	return out
}

// align is a column's alignment; numbers default to the right, like in a spreadsheet.
func align(c hubv1alpha1.Column) string {
	if c.Align != "" {
		return string(c.Align)
	}
	t := c.Type
	if c.DisplayType != "" {
		t = c.DisplayType
	}
	if t == hubv1alpha1.ColumnNumber {
		return "right"
	}
	return "left"
}

// rowViews formats the cells of one page of entries. On a board whose rules name an
// uncertainty (docs/ranking.md, "Rank ranges") each row gets its rank range, and the
// cells of columns showing the uncertain rule's value get the uncertainty: "± h" (h the
// 95% interval's half width, 1.96·stderr) for a stderr, "[low, high]" for an interval.
// A row whose values changed after since gets a mark linking to its history page under
// boardURL.
func rowViews(columns []hubv1alpha1.Column, rules []hubv1alpha1.RankRule, entries []Entry, boardURL string, since time.Time) []rowView {
	aligns := make([]string, len(columns))
	for i, c := range columns {
		aligns[i] = align(c)
	}
	var unc *hubv1alpha1.RankRule
	for i := range rules {
		if rules[i].HasUncertainty() {
			unc = &rules[i]
			break
		}
	}
	rows := make([]rowView, 0, len(entries))
	for _, e := range entries {
		values := decodeRow(e.Row)
		cells := make([]cellView, len(columns))
		for i, c := range columns {
			cells[i] = cellView{Cell: formatCell(c, values), Align: aligns[i]}
			if unc != nil && e.Interval.OK && c.DisplayAccessor == "" && c.Accessor == unc.Accessor {
				cells[i].HTML += uncertaintyHTML(unc, e)
			}
		}
		rv := rowView{Rank: e.Rank, Cells: cells, VerifiedTitle: verifiedTitle(e.Row)}
		if unc != nil && e.RankUpper > 0 {
			rv.Range, rv.RangeTitle = rankRange(e)
		}
		if at := rowhistory.LastChange(e.Row); at != nil && at.After(since) {
			rv.ChangedOn = at.UTC().Format(time.DateOnly)
			rv.HistoryURL = boardURL + "/rows/" + url.PathEscape(hubv1alpha1.ID(e.Row)) + "/history"
		}
		rows = append(rows, rv)
	}
	return rows
}

// verifiedTitle describes the run that wrote a verified row: "" when it is not
// verified. The page is public: the requester is not named.
func verifiedTitle(row *hubv1alpha1.LeaderboardRow) string {
	p := wire.ProvenanceOf(row, false)
	if p == nil {
		return ""
	}
	t := "Written by a run Podium admitted"
	if p.ImageDigest != "" {
		t += "; image " + p.ImageDigest
	}
	if p.JobID != nil {
		t += "; job " + *p.JobID
	}
	if p.RanAt != nil {
		t += "; ran at " + *p.RanAt
	}
	return t
}

// uncertaintyHTML is the uncertainty shown after a value (numbers only: no escaping).
func uncertaintyHTML(r *hubv1alpha1.RankRule, e Entry) template.HTML {
	if r.Stderr != "" {
		return template.HTML(` <span class="pm" title="95% interval ` + roundNumber(e.Interval.Low) + ` to ` +
			roundNumber(e.Interval.High) + `">± ` + roundNumber((e.Interval.High-e.Interval.Low)/2) + `</span>`)
	}
	return template.HTML(` <span class="pm" title="interval">[` + roundNumber(e.Interval.Low) + `, ` + roundNumber(e.Interval.High) + `]</span>`)
}

// rankRange is a row's rank range ("2–5"; "5" when the data supports no better rank)
// and its tooltip.
func rankRange(e Entry) (string, string) {
	r, u := strconv.Itoa(e.Rank), strconv.Itoa(e.RankUpper)
	if e.RankUpper >= e.Rank {
		return r, "No row with a lower rank is ahead of this one beyond doubt"
	}
	return u + "–" + r, "The data supports ranks " + u + " to " + r + ": " +
		strconv.Itoa(e.RankUpper-1) + " rows are ahead beyond doubt (their intervals lie entirely above this row's)"
}

// paginate fills the paging fields for a board of total rows.
func (p *boardPage) paginate(total int, q query) {
	p.Total, p.Page = total, q.Page
	p.TotalPages = (total + PageSize - 1) / PageSize
	if len(p.Rows) > 0 {
		p.FirstRow = (q.Page-1)*PageSize + 1
		p.LastRow = p.FirstRow + len(p.Rows) - 1
	}
	if q.Page > 1 {
		prev := min(q.Page-1, max(p.TotalPages, 1))
		p.PrevURL = pageURL(prev, q.Sort, q.Dir, q.Verified)
		p.FirstURL = pageURL(1, q.Sort, q.Dir, q.Verified)
	}
	if q.Page < p.TotalPages {
		p.NextURL = pageURL(q.Page+1, q.Sort, q.Dir, q.Verified)
		p.LastURL = pageURL(p.TotalPages, q.Sort, q.Dir, q.Verified)
	}
}
