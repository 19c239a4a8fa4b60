package cli

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestHelpFile reads help.md as the CLI does: every section is the help of one verb of
// the command tree, and every verb built by verb (it has --json and runs) has its section.
func TestHelpFile(t *testing.T) {
	a := &app{stdin: strings.NewReader(""), stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}}
	seen := map[string]bool{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		path := strings.TrimPrefix(c.CommandPath(), "podium ")
		if h, ok := verbHelp[path]; ok {
			seen[path] = true
			if c.Use != h.use || c.Short != h.short || c.Long != h.long || !slices.Equal(c.Aliases, h.aliases) {
				t.Errorf("%s: the command's help is not help.md's section", path)
			}
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(a.newRoot())
	for path := range verbHelp {
		if !seen[path] {
			t.Errorf("help.md has a section ## %s that no verb uses", path)
		}
	}
	if len(seen) < 25 {
		t.Errorf("only %d verbs have their help in help.md", len(seen))
	}
}

// TestParseHelp is parseHelp's table: the sections it reads and the files it refuses.
func TestParseHelp(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		want       map[string]help
		err        string
	}{
		{name: "short only", file: "intro\n\n## a b\n\nUse: b X\nShort: does b\n",
			want: map[string]help{"a b": {use: "b X", short: "does b"}}},
		{name: "aliases and long, two sections",
			file: "intro\n\n## l\n\nUse: list\nAliases: ls, l\nShort: lists\n\nline one: kept\n  line two\n\n## s\n\nUse: s\nShort: x: y\n",
			want: map[string]help{
				"l": {use: "list", aliases: []string{"ls", "l"}, short: "lists", long: "line one: kept\n  line two"},
				"s": {use: "s", short: "x: y"},
			}},
		{name: "no sections", file: "only an introduction\n", want: map[string]help{}},
		{name: "unknown field", file: "## a\n\nUse: a\nShort: s\nLong: l\n", err: `"Long: l" is not Use, Aliases or Short`},
		{name: "no Short", file: "## a\n\nUse: a\n", err: "section ## a needs Use and Short"},
		{name: "section twice", file: "## a\n\nUse: a\nShort: s\n\n## a\n\nUse: a\nShort: s\n", err: "section ## a given twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseHelp(tc.file)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %d sections, want %d: %#v", len(got), len(tc.want), got)
			}
			for k, w := range tc.want {
				g := got[k]
				if g.use != w.use || g.short != w.short || g.long != w.long || !slices.Equal(g.aliases, w.aliases) {
					t.Errorf("section %s = %#v, want %#v", k, g, w)
				}
			}
		})
	}
}
