package hub

import (
	"bytes"
	"fmt"
	"net/http"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/apierr"
	"podium.dev/podium/internal/schema"
)

// RowValidator checks a row's values against its board's schemas and returns every
// failing field.
type RowValidator func(board *hubv1alpha1.LeaderboardSpec, row *hubv1alpha1.LeaderboardRowSpec) []apierr.FieldError

// DefaultValidator validates with internal/schema, the package the controller uses, so
// that the CLI refuses before writing what the controller would mark invalid.
func DefaultValidator(board *hubv1alpha1.LeaderboardSpec, row *hubv1alpha1.LeaderboardRowSpec) []apierr.FieldError {
	var out []apierr.FieldError
	check := func(prefix string, schemaRaw, value []byte) {
		s, err := schema.Parse(schemaRaw)
		if err != nil {
			// An unusable schema is the board's problem, reported on the board.
			return
		}
		for _, fe := range s.Validate(prefix, value) {
			out = append(out, apierr.FieldError{Field: fe.Field, Message: fe.Message})
		}
	}
	check("metadata", raw(board.MetadataSchema), raw(row.Metadata))
	check("metrics", raw(board.MetricsSchema), raw(row.Metrics))
	return out
}

// InvalidRow is one entry of rows_invalid's details.
type InvalidRow struct {
	Index  *int                `json:"index,omitempty"`
	ID     string              `json:"id,omitempty"`
	Fields []apierr.FieldError `json:"fields"`
}

// RowsInvalid is the details object of a rows_invalid error.
type RowsInvalid struct {
	InvalidRowCount int          `json:"invalid_row_count"`
	InvalidRows     []InvalidRow `json:"invalid_rows"`
	Truncated       bool         `json:"truncated"`
}

// maxInvalidListed bounds the invalid rows an error lists.
const maxInvalidListed = 20

// add records an invalid row: every one is counted, the first maxInvalidListed listed.
func (d *RowsInvalid) add(r InvalidRow) {
	d.InvalidRowCount++
	if len(d.InvalidRows) == maxInvalidListed {
		d.Truncated = true
		return
	}
	d.InvalidRows = append(d.InvalidRows, r)
}

// Err is the one rows_invalid error (422, these details), nil when no row was
// recorded. The message names the first invalid row's first field as the rows of the
// request ("rows[2]: metrics.reward: ...") and counts the others; rows that are not
// in the request (no index) are named by id, with what the request would do to them.
func (d *RowsInvalid) Err() error {
	if d.InvalidRowCount == 0 {
		return nil
	}
	first := d.InvalidRows[0]
	var msg string
	if first.Index != nil {
		msg = fmt.Sprintf("rows[%d]: %s: %s", *first.Index, first.Fields[0].Field, first.Fields[0].Message)
		if d.InvalidRowCount > 1 {
			msg += fmt.Sprintf(" (%d invalid rows in all)", d.InvalidRowCount)
		}
	} else {
		msg = fmt.Sprintf("the new definition would make %s invalid (row %s: %s: %s); fix them in the same update with --rows, or change the definition",
			existingRows(d.InvalidRowCount), first.ID, first.Fields[0].Field, first.Fields[0].Message)
	}
	e := apierr.New(http.StatusUnprocessableEntity, apierr.CodeRowsInvalid, "%s; nothing was written", msg)
	e.Details = *d
	return e
}

func existingRows(n int) string {
	if n == 1 {
		return "1 existing row"
	}
	return fmt.Sprintf("%d existing rows", n)
}

// RowInput is a row about to be written: its spec and where it came from.
type RowInput struct {
	// Index is the row's position in its file.
	Index int
	// ID is the row's id when it updates an existing row.
	ID   string
	Spec hubv1alpha1.LeaderboardRowSpec
}

// ValidateRows checks rows before anything is written: status, trial ids (UUIDs,
// unique across the request), values against the board's schemas. It returns one
// rows_invalid error listing every invalid row.
func (c *Client) ValidateRows(board *hubv1alpha1.LeaderboardSpec, rows []RowInput) error {
	seen := map[string]int{}
	var details RowsInvalid
	for _, r := range rows {
		var fields []apierr.FieldError
		switch r.Spec.Visibility {
		case "", hubv1alpha1.RowDisplay, hubv1alpha1.RowHide:
		default:
			fields = append(fields, apierr.FieldError{Field: "status", Message: fmt.Sprintf("must be display or hide, not %q", r.Spec.Visibility)})
		}
		for _, f := range []struct {
			name string
			v    []byte
		}{{"metadata", raw(r.Spec.Metadata)}, {"metrics", raw(r.Spec.Metrics)}} {
			if len(f.v) > 0 && !bytes.HasPrefix(bytes.TrimSpace(f.v), []byte("{")) {
				fields = append(fields, apierr.FieldError{Field: f.name, Message: "must be an object"})
			}
		}
		for j, t := range r.Spec.TrialIDs {
			field := fmt.Sprintf("trial_ids[%d]", j)
			if !hubv1alpha1.IsUUID(t) {
				fields = append(fields, apierr.FieldError{Field: field, Message: fmt.Sprintf("%q is not a UUID", t)})
				continue
			}
			if prev, dup := seen[t]; dup {
				fields = append(fields, apierr.FieldError{Field: field, Message: fmt.Sprintf("trial %s is used twice in this request (also by rows[%d])", t, prev)})
				continue
			}
			seen[t] = r.Index
		}
		if len(fields) == 0 && c.ValidateFn != nil {
			fields = c.ValidateFn(board, &r.Spec)
		}
		if len(fields) == 0 {
			continue
		}
		idx := r.Index
		details.add(InvalidRow{Index: &idx, ID: r.ID, Fields: fields})
	}
	return details.Err()
}

func raw(j *apiextensionsv1.JSON) []byte {
	if j == nil {
		return nil
	}
	return j.Raw
}
