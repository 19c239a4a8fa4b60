package index

import (
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"podium.dev/podium/internal/secrets"
)

// queryNames maps each expression by which the tree names a cache index (as written at
// the call) to the index name it stands for. A new expression fails
// TestEveryQueriedIndexIsRegistered until it is added here, so that it is looked at.
var queryNames = map[string]string{
	"index.UID":           UID,
	"index.BoardSlug":     BoardSlug,
	"index.RowBoard":      RowBoard,
	"index.RunSecretUses": RunSecretUses,
	"index.RunSecretOf":   RunSecretOf,
	"RunSecretOf":         RunSecretOf, // inside internal/index (RunsOf)
	"secrets.SlotIndex":   secrets.SlotIndex,
	"SlotIndex":           secrets.SlotIndex, // inside internal/secrets
}

// notCache are the trees whose field selectors go to the apiserver (a CRD's
// selectableFields), not to the manager's cache: the CLI. hack/ and test/ run no manager.
var notCache = []string{"internal/cli", "cmd/podium", "hack", "test", "bin", ".git"}

// cacheQueries finds every index name the operator's code queries: the keys of
// client.MatchingFields, the field of fields.OneTermEqualSelector, and "field:"+name
// (an informer's indexer read directly). Test files are left out (they build their own
// clients).
func cacheQueries(t *testing.T) map[string][]string {
	t.Helper()
	root := filepath.Join("..", "..")
	found := map[string][]string{} // expression -> where
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			for _, skip := range notCache {
				if rel == skip {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		add := func(e ast.Expr) {
			found[types.ExprString(e)] = append(found[types.ExprString(e)], fset.Position(e.Pos()).String())
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CompositeLit:
				if types.ExprString(n.Type) == "client.MatchingFields" {
					for _, el := range n.Elts {
						if kv, ok := el.(*ast.KeyValueExpr); ok {
							add(kv.Key)
						}
					}
				}
			case *ast.CallExpr:
				if types.ExprString(n.Fun) == "fields.OneTermEqualSelector" && len(n.Args) == 2 {
					add(n.Args[0])
				}
			case *ast.BinaryExpr:
				if lit, ok := n.X.(*ast.BasicLit); ok && lit.Value == `"field:"` {
					add(n.Y)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// TestEveryQueriedIndexIsRegistered: a query of an index that Register does not add
// fails at run time ("index with name field:... does not exist"), only on the path that
// runs it. Every index the code queries must be one of Fields, and every one of Fields
// must be queried somewhere (an index nobody reads costs memory per object).
func TestEveryQueriedIndexIsRegistered(t *testing.T) {
	registered := map[string]bool{}
	for _, f := range Fields() {
		registered[f.Name] = true
	}
	queried := map[string]bool{}
	found := cacheQueries(t)
	if len(found) == 0 {
		t.Fatal("found no index query in the tree: the scan is broken")
	}
	for expr, where := range found {
		name, ok := queryNames[expr]
		if !ok {
			t.Errorf("%s: an index is queried as %s, which this test does not know; name it by a constant of package index (or add it to queryNames)", where[0], expr)
			continue
		}
		if !registered[name] {
			t.Errorf("%s: index %q is queried but not registered by index.Fields", where[0], name)
		}
		queried[name] = true
	}
	for name := range registered {
		if !queried[name] {
			t.Errorf("index %q is registered but nothing queries it", name)
		}
	}
}

// TestFieldsAreRegisteredOnce: one kind never gets the same index name twice (the
// cache refuses it at start-up), and every RecordField is among Fields.
func TestFieldsAreRegisteredOnce(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range Fields() {
		k := reflect.TypeOf(f.Object).Elem().Name() + "/" + f.Name
		if seen[k] {
			t.Errorf("%s is registered twice", k)
		}
		seen[k] = true
	}
	for _, f := range RecordFields() {
		if !seen[reflect.TypeOf(f.Object).Elem().Name()+"/"+f.Name] {
			t.Errorf("record field %s/%s is not among Fields", reflect.TypeOf(f.Object).Elem().Name(), f.Name)
		}
	}
}
