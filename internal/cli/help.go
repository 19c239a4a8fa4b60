package cli

import (
	_ "embed"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// helpFile is the help of every verb, as documentation: one section a verb (help.md
// says how a section is written).
//
//go:embed help.md
var helpFile string

// verbHelp is help.md read: a verb's path below podium (`hub leaderboard show`) to its
// help. A malformed file stops the program at start; TestHelpFile reads it.
var verbHelp = mustParseHelp(helpFile)

// help is what `--help` says of a verb.
type help struct {
	use, short, long string
	aliases          []string
}

// command is a cobra command with h's use line, aliases and texts.
func (h help) command() *cobra.Command {
	return &cobra.Command{Use: h.use, Aliases: h.aliases, Short: h.short, Long: h.long}
}

// helpOf is the help of the verb at path; a verb without a section is a programming
// error.
func helpOf(path string) help {
	h, ok := verbHelp[path]
	if !ok {
		panic("internal/cli/help.md has no section ## " + path)
	}
	return h
}

func mustParseHelp(s string) map[string]help {
	m, err := parseHelp(s)
	if err != nil {
		panic("internal/cli/help.md: " + err.Error())
	}
	return m
}

// parseHelp reads help.md: after its introduction, sections `## <path>`, each a blank
// line, the lines `Use: `, `Aliases: ` (optional, comma-separated) and `Short: `, then
// optionally a blank line and the long help, up to the next section (trailing blank lines
// dropped).
func parseHelp(s string) (map[string]help, error) {
	m := map[string]help{}
	parts := strings.Split("\n"+s, "\n## ")
	for _, sec := range parts[1:] {
		path, rest, _ := strings.Cut(sec, "\n")
		if _, dup := m[path]; dup {
			return nil, fmt.Errorf("section ## %s given twice", path)
		}
		head, long, _ := strings.Cut(strings.Trim(rest, "\n"), "\n\n")
		var h help
		for _, line := range strings.Split(head, "\n") {
			key, val, _ := strings.Cut(line, ": ")
			switch key {
			case "Use":
				h.use = val
			case "Aliases":
				h.aliases = strings.Split(val, ", ")
			case "Short":
				h.short = val
			default:
				return nil, fmt.Errorf("section ## %s: %q is not Use, Aliases or Short", path, line)
			}
		}
		if h.use == "" || h.short == "" {
			return nil, fmt.Errorf("section ## %s needs Use and Short", path)
		}
		h.long = long
		m[path] = h
	}
	return m, nil
}
