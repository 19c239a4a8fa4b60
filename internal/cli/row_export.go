package cli

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/boardcsv"
	"podium.dev/podium/internal/cli/hub"
)

// rowExportOptions is `row export`: one row, or every row of a board (--all), as a
// file to edit and apply; or (--format csv) a board's ranking as the HTTP API's CSV.
type rowExportOptions struct {
	*app
	oneArg
	outputFile
	format string
	all    bool
	// fileFormat is the rows file's format (not used for csv).
	fileFormat hub.Format
}

func (a *app) rowExportCmd() *cobra.Command {
	return a.verb(&rowExportOptions{app: a}, "hub leaderboard row export", exactArgs(1, "one row id, or one leaderboard with --all or --format csv"))
}

// addFlags adds the verb's own flags to c.
func (o *rowExportOptions) addFlags(c *cobra.Command) {
	o.add(c, ".yaml, .yml or .json; .csv with --format csv")
	c.Flags().StringVar(&o.format, "format", "", "yaml or json (default: by extension), or csv: the board's ranked rows")
	c.Flags().BoolVar(&o.all, "all", false, "export every row of the leaderboard")
}

func (o *rowExportOptions) Validate() error {
	if err := o.required(); err != nil {
		return err
	}
	switch o.format {
	case "", string(hub.FormatYAML), string(hub.FormatJSON):
	case "csv":
		if o.all {
			return usagef("--format csv exports the board's ranked rows; --all is for rows files (.yaml, .yml, .json)")
		}
		if !strings.EqualFold(filepath.Ext(o.output), ".csv") {
			return usagef("--format csv writes a .csv file; %q does not end in .csv", o.output)
		}
		return nil
	default:
		return usagef("--format must be yaml, json or csv, not %q", o.format)
	}
	var err error
	if _, o.fileFormat, err = hub.OutputFormat(o.output, o.format); err != nil {
		return usageError{err}
	}
	if !o.all && !hubv1alpha1.IsUUID(o.arg) {
		return usagef("%q is not a row id; to export every row of a leaderboard add --all", o.arg)
	}
	return nil
}

func (o *rowExportOptions) Run(ctx context.Context) error {
	if o.format == "csv" {
		return o.exportCSV(ctx)
	}
	doc, n, id, err := o.document(ctx)
	if err != nil {
		return err
	}
	data, err := hub.Marshal(doc, o.fileFormat)
	if err != nil {
		return err
	}
	if err := o.write(data); err != nil {
		return err
	}
	if o.json {
		return o.printJSON(map[string]any{"id": id, "output": o.output, "rows": n})
	}
	fmt.Fprintf(o.stdout, "Exported %s to %s\n", count(n, "row"), o.output)
	return nil
}

// document is what the file holds: every row of the board (--all) or the one row, read
// once the controller has recorded their change times (Settle), so that the
// expected_updated_at written is the read's from then on; n rows, of board or row id.
func (o *rowExportOptions) document(ctx context.Context) (doc any, n int, id string, err error) {
	if o.all {
		cl, lb, err := o.board(ctx, o.arg)
		if err != nil {
			return nil, 0, "", err
		}
		cl.Settle(ctx, lb)
		rows, err := cl.SettledRows(ctx, lb)
		if err != nil {
			return nil, 0, "", err
		}
		f := hub.RowsExport(lb, rows)
		return f, len(f.Rows), hubv1alpha1.ID(lb), nil
	}
	cl, row, err := o.row(ctx, o.arg)
	if err != nil {
		return nil, 0, "", err
	}
	cl.Settle(ctx, row)
	lb, err := cl.BoardOf(ctx, row)
	if err != nil {
		return nil, 0, "", err
	}
	return hub.RowExport(lb, row), 1, hubv1alpha1.ID(row), nil
}

// exportCSV writes a board's ranked rows as CSV, the bytes the HTTP API's CSV read
// serves for the same rows (package boardcsv).
func (o *rowExportOptions) exportCSV(ctx context.Context) error {
	lb, rows, err := o.rankedBoard(ctx, o.arg)
	if err != nil {
		return err
	}
	ranked := rankedOnly(rows)
	var buf bytes.Buffer
	if err := boardcsv.Write(&buf, lb, ranked); err != nil {
		return err
	}
	if err := o.write(buf.Bytes()); err != nil {
		return err
	}
	if o.json {
		return o.printJSON(map[string]any{"id": hubv1alpha1.ID(lb), "output": o.output, "rows": len(ranked)})
	}
	fmt.Fprintf(o.stdout, "Exported %s to %s\n", count(len(ranked), "ranked row"), o.output)
	return nil
}
