package cli

import (
	"github.com/spf13/cobra"
)

func (a *app) rowCmd() *cobra.Command {
	row := &cobra.Command{Use: "row", Aliases: []string{"rows"}, Short: "Manage a leaderboard's rows", Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error { return c.Help() }}
	row.AddCommand(a.rowCreateCmd(), a.rowListCmd(), a.rowShowCmd(), a.rowExportCmd(), a.rowUpdateCmd(), a.rowDeleteCmd(), a.rowHistoryCmd(), a.trialCmd())
	return row
}

func (a *app) trialCmd() *cobra.Command {
	t := &cobra.Command{Use: "trial", Aliases: []string{"trials"}, Short: "Manage a row's linked trial ids", Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error { return c.Help() }}
	t.AddCommand(a.trialListCmd(), a.trialChangeCmd("set"), a.trialChangeCmd("add"), a.trialChangeCmd("remove"))
	return t
}
