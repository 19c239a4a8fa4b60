package admissiongen

import (
	"bytes"
	"embed"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/template"
)

//go:embed templates/*.tmpl
var templates embed.FS

// Outputs are the files Render writes, by path from the repository root, and the
// template each is expanded from.
var Outputs = map[string]string{
	"config/admission/run_isolation.yaml": "run_isolation.yaml.tmpl",
	"config/admission/run_integrity.yaml": "run_integrity.yaml.tmpl",
	"config/webhook/manifests.yaml":       "webhook.yaml.tmpl",
}

// data is what the templates expand.
type data struct {
	Source                                              string
	Kinds                                               []Kind
	Isolation, Integrity, Revisions, Elsewhere, Webhook map[string]string
}

// Render expands every output from kinds, by path.
func Render(kinds []Kind) (map[string][]byte, error) {
	isolation := isolationMatch(kinds)
	for k, v := range isolationVariables(kinds) {
		isolation[k] = v
	}
	d := data{
		Kinds: kinds, Isolation: isolation, Integrity: integrity(kinds), Revisions: revisions(),
		Elsewhere: elsewhere(kinds), Webhook: webhook(kinds),
	}
	t, err := template.New("").Option("missingkey=error").
		Funcs(template.FuncMap{"indent": indentAll, "rules": rules}).ParseFS(templates, "templates/*.tmpl")
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for path, name := range Outputs {
		d.Source = "internal/admissiongen/templates/" + name
		var b bytes.Buffer
		if err := t.ExecuteTemplate(&b, name, d); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out[path] = append(bytes.TrimRight(b.Bytes(), "\n"), '\n')
	}
	return out, nil
}

// Write renders the outputs from Kinds into the repository at root.
func Write(root string) error {
	out, err := Render(Kinds)
	if err != nil {
		return err
	}
	for path, b := range out {
		if err := os.WriteFile(filepath.Join(root, path), b, 0o644); err != nil { //nolint:gosec // a manifest under the repository, world-readable as git checks it out
			return err
		}
	}
	return nil
}

// indentAll indents every line of s by n spaces.
func indentAll(n int, s string) string {
	pad := strings.Repeat(" ", n)
	return pad + strings.ReplaceAll(s, "\n", "\n"+pad)
}

// rules are the YAML admission rules for kinds, one per API group in the table's
// order: apiVersions version, operations ops (comma-separated), the kinds'
// subresources when sub, scope Namespaced when scoped, each rule at indent n.
func rules(kinds []Kind, version, ops string, sub, scoped bool, n int) string {
	var groups []string
	byGroup := map[string][]string{}
	for _, k := range kinds {
		if !slices.Contains(groups, k.Group) {
			groups = append(groups, k.Group)
		}
		byGroup[k.Group] = append(byGroup[k.Group], k.Resource)
		if sub {
			for _, s := range k.Subresources {
				byGroup[k.Group] = append(byGroup[k.Group], k.Resource+"/"+s)
			}
		}
	}
	list := func(ss []string) string { return `["` + strings.Join(ss, `", "`) + `"]` }
	pad := strings.Repeat(" ", n)
	var b strings.Builder
	for i, g := range groups {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "%s- apiGroups: %s\n%s  apiVersions: [%q]\n%s  operations: %s\n%s  resources: %s",
			pad, list([]string{g}), pad, version, pad, list(strings.Split(ops, ",")), pad, list(byGroup[g]))
		if scoped {
			fmt.Fprintf(&b, "\n%s  scope: Namespaced", pad)
		}
	}
	return b.String()
}
