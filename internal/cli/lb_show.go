package cli

import (
	"context"

	"github.com/spf13/cobra"
)

// showOptions is `leaderboard show <leaderboard>`.
type showOptions struct {
	*app
	listArgs
}

func (a *app) showCmd() *cobra.Command {
	return a.verb(&showOptions{app: a}, "hub leaderboard show", exactArgs(1, "one leaderboard"))
}

// addFlags adds the verb's own flags to c.
func (o *showOptions) addFlags(c *cobra.Command) {
	o.paging.add(c)
	c.Flags().BoolVar(&o.noHeaders, "no-headers", false, "omit the rows table's header")
}

func (o *showOptions) Run(ctx context.Context) error {
	lb, rows, err := o.rankedBoard(ctx, o.arg)
	if err != nil {
		return err
	}
	ranked := rankedOnly(rows)
	lo, hi, pg := o.window(o.paging, len(ranked))
	return o.print(lb, len(ranked), ranked[lo:hi], pg)
}
