package cli

import (
	"bufio"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"podium.dev/podium/internal/cli/hub"
)

func (a *app) rowDeleteCmd() *cobra.Command {
	var yes bool
	c := &cobra.Command{
		Use:   "delete <row-id>... [--yes]",
		Short: "Permanently delete rows (and their trial links)",
		Long: "Without --yes, asks for confirmation on a terminal; when stdin is not a terminal, --yes is required.\n" +
			"An id given twice counts once. Every row is found and every delete checked by a server-side\n" +
			"dry-run first, so nothing is deleted unless every delete is allowed.",
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("row delete takes one or more row ids")
			}
			for _, id := range args {
				if !hub.IsUUID(id) {
					return usagef("%q is not a row id (a UUID)", id)
				}
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			n := len(hub.Dedupe(args))
			if !yes {
				if !isTerminal(a.stdin) {
					return usagef("refusing to delete %s without confirmation: stdin is not a terminal; pass --yes", count(n, "row"))
				}
				fmt.Fprintf(a.stderr, "Permanently delete %s and their trial links? Type 'yes' to confirm: ", count(n, "row"))
				answer, _ := bufio.NewReader(a.stdin).ReadString('\n')
				if a := strings.ToLower(strings.TrimSpace(answer)); a != "yes" && a != "y" {
					return fmt.Errorf("not confirmed: nothing was deleted")
				}
			}
			cl, err := a.hub()
			if err != nil {
				return err
			}
			rows, err := cl.DeleteRows(a.ctx(c), args)
			if err != nil {
				return err
			}
			ids := []string{}
			for _, r := range rows {
				ids = append(ids, string(r.UID))
			}
			if a.json {
				return a.printJSON(map[string]any{"deleted": ids})
			}
			fmt.Fprintf(a.stdout, "Deleted %s\n", count(len(ids), "row"))
			return nil
		},
	}
	c.Flags().BoolVarP(&yes, "yes", "y", false, "delete without asking")
	a.addJSON(c)
	return c
}
