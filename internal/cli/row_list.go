package cli

import (
	"context"

	"github.com/spf13/cobra"
)

// rowListOptions is `row list <leaderboard>`: every row, ranked ones first.
type rowListOptions struct {
	*app
	ref    string
	paging paging
}

func (a *app) rowListCmd() *cobra.Command {
	o := &rowListOptions{app: a}
	c := &cobra.Command{
		Use:     "list <leaderboard>",
		Aliases: []string{"ls"},
		Short:   "List a leaderboard's rows with ids and ranks",
		Long: "Rows in rank order as the server ranks them (shown, valid rows), then the unranked\n" +
			"(hidden, invalid or not yet validated) rows in creation order, with rank \"-\".",
		Args: exactArgs(1, "one leaderboard"),
		RunE: a.runVerb(o),
	}
	o.paging.add(c)
	a.addListFlags(c, "row ids")
	return c
}

func (o *rowListOptions) Complete(c *cobra.Command, args []string) error {
	o.ref = args[0]
	o.paging.complete(c)
	return nil
}

func (o *rowListOptions) Validate() error { return o.paging.validate() }

func (o *rowListOptions) Run(ctx context.Context) error {
	lb, rows, err := o.rankedBoard(ctx, o.ref)
	if err != nil {
		return err
	}
	lo, hi, pg := o.window(o.paging, len(rows))
	return o.print(lb, rows[lo:hi], pg)
}
