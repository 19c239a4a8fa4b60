package cli

import (
	"context"

	"github.com/spf13/cobra"
)

// rowShowOptions is `row show <row-id>`.
type rowShowOptions struct {
	*app
	id string
}

func (a *app) rowShowCmd() *cobra.Command {
	o := &rowShowOptions{app: a}
	c := &cobra.Command{
		Use:   "show <row-id>",
		Short: "Show a row",
		Args:  exactArgs(1, "one row id"),
		RunE:  a.runVerb(o),
	}
	a.addJSON(c)
	return c
}

func (o *rowShowOptions) Complete(_ *cobra.Command, args []string) error {
	o.id = args[0]
	return nil
}

func (o *rowShowOptions) Validate() error { return nil }

func (o *rowShowOptions) Run(ctx context.Context) error {
	cl, row, lb, err := o.rowAndBoard(ctx, o.id)
	if err != nil {
		return err
	}
	ranked, err := cl.RankOf(ctx, lb, row)
	if err != nil {
		return err
	}
	return o.print(lb, ranked)
}
