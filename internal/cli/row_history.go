package cli

import (
	"context"

	"github.com/spf13/cobra"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/rowhistory"
)

// rowHistoryOptions is `row history <row-id>`.
type rowHistoryOptions struct {
	*app
	oneArg
}

func (a *app) rowHistoryCmd() *cobra.Command {
	o := &rowHistoryOptions{app: a}
	return a.verb(o, &cobra.Command{
		Use:   "history <row-id>",
		Short: "Show who changed a row's values, when, and from what to what (newest first)",
		Long: "Show a row's change history, newest first: one line per changed field, with the\n" +
			"time, the Kubernetes user, and the old and new values (\"-\" when the field did not\n" +
			"exist; a value cut to 256 bytes or clipped for the table ends in \"…\"). A row\n" +
			"keeps its last 10 changes (docs/leaderboards.md, \"Change history\").",
		Args: exactArgs(1, "one row id"),
	})
}

func (o *rowHistoryOptions) Run(ctx context.Context) error {
	_, row, lb, err := o.rowAndBoard(ctx, o.arg)
	if err != nil {
		return err
	}
	// The CLI's users read the row with their own Kubernetes rights: members, who see
	// user names on every board.
	return o.print(rowhistory.Served(hubv1alpha1.ID(lb), row, true))
}
